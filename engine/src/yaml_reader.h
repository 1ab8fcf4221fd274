// Internal header, not API: reading YAML with located errors, shared by the scene, scheme and
// scenario loaders. Every value is read through a MapReader that knows its section's allowed keys,
// so unknown keys are errors and every error carries the file, the 1-based line and the key path.
#pragma once

#include <dynamics/math.h>
#include <engine/scene.h>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sim::engine::detail {

using dynamics::Vec3;

// Parses a whole string as a finite double.
inline std::optional<double> parseNumber(const std::string& text) {
  double value = 0.0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (begin != end && *begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || begin == end || !std::isfinite(value)) return {};
  return value;
}

// FNV-1a over bytes, continuing from `h` (start: 14695981039346656037): the hash recordings and
// result files keep of scene and scenario files.
inline void hashBytes(std::uint64_t& h, std::string_view bytes) {
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
}

// Parses YAML text; a syntax error becomes a SceneError at its line, with the column and the
// line's text. A tab in an indentation is named as the cause (YAML indents with spaces only;
// yaml-cpp then reports something generic, sometimes a line or two later).
inline YAML::Node parseYaml(const std::string& text, const std::string& file) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    std::size_t start = 0;
    for (int line = 1; start <= text.size(); ++line) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      const std::size_t indent_end = text.find_first_not_of(" \t", start);
      const std::size_t tab = text.find('\t', start);
      if (tab < std::min(end, indent_end)) {
        throw SceneError(
            file, line, "",
            fmt::format("a tab in the indentation (column {}): YAML indents with spaces only",
                        tab - start + 1));
      }
      start = end + 1;
    }
    if (e.mark.is_null()) throw SceneError(file, 0, "", e.msg);
    std::size_t at = 0;
    for (int line = 0; line < e.mark.line && at != std::string::npos; ++line) {
      at = text.find('\n', at);
      if (at != std::string::npos) ++at;
    }
    const std::string line_text =
        at == std::string::npos ? "" : text.substr(at, text.find('\n', at) - at);
    // yaml-cpp notices an unclosed flow collection only on a later line: name the line that
    // opened it (the nearest line above with more `{` or `[` than it closes).
    std::string hint;
    std::vector<std::string> lines;
    for (std::size_t b = 0; b < at && at != std::string::npos;) {
      const std::size_t nl = text.find('\n', b);
      lines.push_back(text.substr(b, nl - b));
      b = nl + 1;
    }
    for (std::size_t k = lines.size(); k-- > 0;) {
      long open = 0;
      for (char c : lines[k]) open += (c == '{' || c == '[') ? 1 : (c == '}' || c == ']') ? -1 : 0;
      if (open > 0) hint = fmt::format("; line {} opens a `{{` or `[` it does not close", k + 1);
      if (open != 0 || lines[k].find_first_not_of(" \t") != std::string::npos) break;
    }
    throw SceneError(
        file, e.mark.line + 1, "",
        fmt::format("{} (column {}: `{}`){}", e.msg, e.mark.column + 1, line_text, hint));
  }
}

inline int lineOf(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

inline std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar: return fmt::format("\"{}\"", node.Scalar());
    case YAML::NodeType::Sequence: return fmt::format("a list of {}", node.size());
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Undefined: break;
  }
  return "nothing";
}

// A shape's `belt:` map, whose motor is looked up once the motors have been read (bodies come
// first in the scene).
struct PendingBelt {
  YAML::Node node;
  std::string path;  // "bodies[tracks].shapes[0].belt"
  std::size_t body = 0;
  std::size_t shape = 0;
};

// Shared state of one conversion: where we are and what was seen where.
struct Context {
  std::string file;
  std::map<std::string, int> lines;  // scene path -> 1-based line, for validate() errors
  bool has_overrides = false;
  std::vector<PendingBelt> belts;

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key,
                         const std::string& message) const {
    throw SceneError(file, lineOf(node), key, message);
  }
  [[noreturn]] void failAt(int line, const std::string& key, const std::string& message) const {
    throw SceneError(file, line, key, message);
  }

  double number(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) fail(node, key, "expected a number, got " + describe(node));
    auto value = parseNumber(node.Scalar());
    if (!value) fail(node, key, "expected a number, got " + describe(node));
    return *value;
  }
  double positive(const YAML::Node& node, const std::string& key) const {
    const double value = number(node, key);
    if (!(value > 0.0)) fail(node, key, fmt::format("expected a positive number, got {}", value));
    return value;
  }
  int integer(const YAML::Node& node, const std::string& key) const {
    const double value = number(node, key);
    if (value != std::floor(value) || std::abs(value) > 1e9) {
      fail(node, key, "expected an integer, got " + describe(node));
    }
    return static_cast<int>(value);
  }
  // A 32-bit mask: an integer in [0, 2^32 - 1].
  std::uint32_t bits(const YAML::Node& node, const std::string& key) const {
    const double value = number(node, key);
    if (value != std::floor(value) || value < 0.0 || value > 4294967295.0) {
      fail(node, key, "expected an integer in [0, 4294967295], got " + describe(node));
    }
    return static_cast<std::uint32_t>(value);
  }
  bool boolean(const YAML::Node& node, const std::string& key) const {
    bool value = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
      fail(node, key, "expected true or false, got " + describe(node));
    }
    return value;
  }
  std::string string(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar() || node.Scalar().empty()) {
      fail(node, key, "expected a name, got " + describe(node));
    }
    return node.Scalar();
  }
  std::vector<double> numbers(const YAML::Node& node, const std::string& key, std::size_t n,
                              const char* what) const {
    if (!node.IsSequence() || node.size() != n) {
      fail(node, key, fmt::format("expected {}, got {}", what, describe(node)));
    }
    std::vector<double> values;
    for (std::size_t i = 0; i < n; ++i) {
      values.push_back(number(node[i], fmt::format("{}[{}]", key, i)));
    }
    return values;
  }
  Vec3 vec3(const YAML::Node& node, const std::string& key) const {
    auto v = numbers(node, key, 3, "a list of 3 numbers [x, y, z]");
    return {v[0], v[1], v[2]};
  }
};

// One YAML map whose keys are checked against the section's allowed list.
class MapReader {
 public:
  MapReader(Context& ctx, const YAML::Node& node, std::string path,
            std::initializer_list<const char*> allowed)
      : ctx_(ctx), node_(node), path_(std::move(path)) {
    if (!node.IsMap()) ctx.fail(node, path_, "expected a map of keys, got " + describe(node));
    for (const auto& entry : node) {
      const std::string key = entry.first.Scalar();
      const std::string key_path = join(key);
      if (std::find_if(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; }) ==
          allowed.end()) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        std::string message = fmt::format("unknown key (expected one of: {})", list);
        if (lineOf(entry.first) == 0 && ctx.has_overrides) message += " (added by --set)";
        ctx.fail(entry.first, key_path, message);
      }
      if (entries_.count(key)) ctx.fail(entry.first, key_path, "key given twice");
      entries_.emplace(key, std::make_pair(entry.first, entry.second));
      ctx.lines[key_path] = lineOf(entry.first);
    }
    ctx.lines.emplace(path_, lineOf(node));
  }

  bool has(const std::string& key) const { return entries_.count(key) != 0; }
  YAML::Node value(const std::string& key) const { return entries_.at(key).second; }
  std::string join(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const std::string& path() const { return path_; }
  int line() const { return lineOf(node_); }

  // Required value: a missing key is an error at the map.
  YAML::Node require(const std::string& key) const {
    if (!has(key)) ctx_.fail(node_, join(key), "missing (required)");
    return value(key);
  }
  double number(const std::string& key, double fallback) const {
    return has(key) ? ctx_.number(value(key), join(key)) : fallback;
  }
  double number(const std::string& key) const { return ctx_.number(require(key), join(key)); }
  double positive(const std::string& key) const { return ctx_.positive(require(key), join(key)); }
  int integer(const std::string& key, int fallback) const {
    return has(key) ? ctx_.integer(value(key), join(key)) : fallback;
  }
  std::uint32_t bits(const std::string& key, std::uint32_t fallback) const {
    return has(key) ? ctx_.bits(value(key), join(key)) : fallback;
  }
  bool boolean(const std::string& key, bool fallback) const {
    return has(key) ? ctx_.boolean(value(key), join(key)) : fallback;
  }
  std::string string(const std::string& key) const { return ctx_.string(require(key), join(key)); }
  Vec3 vec3(const std::string& key, const Vec3& fallback) const {
    return has(key) ? ctx_.vec3(value(key), join(key)) : fallback;
  }
  // Fails unless exactly one of two alternative keys is present.
  void exactlyOne(const char* a, const char* b) const {
    if (has(a) && has(b)) {
      ctx_.fail(entries_.at(b).first, join(b), fmt::format("give either {} or {}, not both", a, b));
    }
    if (!has(a) && !has(b)) {
      ctx_.fail(node_, join(a), fmt::format("missing (required: {} or {})", a, b));
    }
  }
  int keyLine(const std::string& key) const { return lineOf(entries_.at(key).first); }
  // Fails at `key`, when present, with `message` (a key that does not apply in this case).
  void forbid(const std::string& key, const std::string& message) const {
    if (!has(key)) return;
    const int line = keyLine(key);
    ctx_.failAt(line, join(key),
                line == 0 && ctx_.has_overrides ? message + " (added by --set)" : message);
  }

 private:
  Context& ctx_;
  YAML::Node node_;
  std::string path_;
  std::map<std::string, std::pair<YAML::Node, YAML::Node>> entries_;
};

// The items of a list under `key` of a map; each must be a map. Returns the path of each item,
// using its name when it has one ("bodies[link]") and its index otherwise ("bodies[2]"); items of
// lists without names (`named` false) are always addressed by index ("bodies[box].shapes[0]").
inline std::vector<std::pair<YAML::Node, std::string>> listItems(Context& ctx, const MapReader& map,
                                                                 const std::string& key,
                                                                 bool named = true) {
  std::vector<std::pair<YAML::Node, std::string>> items;
  if (!map.has(key)) return items;
  const YAML::Node list = map.value(key);
  const std::string list_path = map.join(key);
  if (list.IsNull()) return items;
  if (!list.IsSequence()) ctx.fail(list, list_path, "expected a list, got " + describe(list));
  std::set<std::string> names;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    std::string path = fmt::format("{}[{}]", list_path, i);
    if (named && item.IsMap() && item["name"] && item["name"].IsScalar()) {
      const std::string name = item["name"].Scalar();
      if (!names.insert(name).second) {
        ctx.fail(item["name"], path + ".name", fmt::format("duplicate name \"{}\"", name));
      }
      path = fmt::format("{}[{}]", list_path, name);
    }
    items.emplace_back(item, path);
  }
  return items;
}

// Looks up a named item of a list already converted; fails naming the known names.
template <typename Items>
int findByName(const Context& ctx, const MapReader& item, const std::string& key,
               const Items& items, const char* kind, bool allow_world = false) {
  const std::string name = item.string(key);
  if (allow_world && name == "world") return dynamics::kWorld;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (items[i].name == name) return static_cast<int>(i);
  }
  std::string known;
  for (const auto& other : items) known += (known.empty() ? "" : ", ") + other.name;
  ctx.failAt(item.keyLine(key), item.join(key),
             fmt::format("no {} named \"{}\" (known: {}{})", kind, name, allow_world ? "world" : "",
                         known.empty() ? "" : (allow_world ? ", " : "") + known));
}

}  // namespace sim::engine::detail
