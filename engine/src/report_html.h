// Internal header, not API: pieces shared by the report pages (report_html.cpp, class_report.cpp).
#pragma once

#include <string>

namespace sim::engine::detail {

/// Text made safe for HTML content and attribute values.
std::string html(const std::string& text);
/// Standard base64 (data URIs).
std::string base64(const std::string& bytes);
/// The page up to <body>: CSP that forbids every external resource, the error recorder, styles.
std::string pageHead(const std::string& title);
/// The footer (HTML) and the end of the page.
std::string pageTail(const std::string& footer);

}  // namespace sim::engine::detail
