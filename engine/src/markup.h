// Internal header, not API: text made safe inside XML and HTML (JUnit files, report pages).
#pragma once

#include <string>

namespace sim::engine::detail {

inline std::string escapeMarkup(const std::string& text) {
  std::string out;
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even escaped.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t')
          out += ' ';
        else
          out += ch;
    }
  }
  return out;
}

}  // namespace sim::engine::detail
