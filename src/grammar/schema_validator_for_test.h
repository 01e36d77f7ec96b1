// An independent JSON Schema check for the keywords the tests use, written from the
// specification rather than from the compiler, so that random generations are held to the
// schema and not to the grammar's own idea of it. Patterns are checked with std::regex
// (ASCII patterns only); formats with hand-written checks.
#pragma once

#include <cmath>
#include <cstdio>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "text/utf8.h"

namespace qvl::grammar_test {

using Json = nlohmann::ordered_json;

inline size_t CodepointCount(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// std::wregex works on code points (wchar_t is 32 bits here), std::regex on bytes.
inline std::wstring Wide(const std::string& s) {
  std::wstring out;
  for (size_t pos = 0; pos < s.size();) {
    const text::Utf8Sequence seq = text::ScanUtf8(s, pos);
    out.push_back(static_cast<wchar_t>(text::DecodeUtf8(s, pos, seq.length)));
    pos += seq.length;
  }
  return out;
}

inline bool ValidFormat(const std::string& format, const std::string& s) {
  int y, m, d, hh, mm, ss;
  const auto valid_date = [](int y, int m, int d) {
    static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return y >= 0 && m >= 1 && m <= 12 && d >= 1 && d <= kDays[m - 1];
  };
  if (format == "date") {
    return s.size() == 10 && std::sscanf(s.c_str(), "%4d-%2d-%2d", &y, &m, &d) == 3 &&
           s[4] == '-' && s[7] == '-' && valid_date(y, m, d);
  }
  if (format == "date-time" || format == "time") {
    const std::regex time(
        R"(([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2}))");
    std::string rest = s;
    if (format == "date-time") {
      if (s.size() < 11 || s[10] != 'T' || !ValidFormat("date", s.substr(0, 10))) return false;
      rest = s.substr(11);
    }
    std::smatch match;
    if (!std::regex_match(rest, match, time)) return false;
    hh = std::stoi(match[1]), mm = std::stoi(match[2]), ss = std::stoi(match[3]);
    return hh < 24 && mm < 60 && ss < 60;
  }
  if (format == "uuid") {
    return std::regex_match(s, std::regex("[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"));
  }
  if (format == "email") {
    const size_t at = s.find('@');
    return at != std::string::npos && at > 0 && at + 1 < s.size() &&
           s.find('@', at + 1) == std::string::npos && s.find('.', at) != std::string::npos &&
           s.find("..") == std::string::npos && s.front() != '.' && s.back() != '.';
  }
  if (format == "ipv4") {
    int a, b, c, e;
    char extra;
    return std::sscanf(s.c_str(), "%d.%d.%d.%d%c", &a, &b, &c, &e, &extra) == 4 && a <= 255 &&
           b <= 255 && c <= 255 && e <= 255 &&
           s.find_first_not_of("0123456789.") == std::string::npos;
  }
  if (format == "uri") {
    const size_t colon = s.find(':');
    return colon != std::string::npos && colon > 0 &&
           std::isalpha(static_cast<unsigned char>(s[0])) &&
           s.find_first_of(" \"<>\\^`{|}") == std::string::npos;
  }
  return false;
}

inline bool Validate(const Json& v, const Json& s, const Json& root);

inline bool ValidateAgainstRoot(const Json& v, const std::string& ref, const Json& root) {
  return Validate(v, root.at(nlohmann::json_pointer<std::string>(ref.substr(1))), root);
}

inline bool Validate(const Json& v, const Json& s, const Json& root) {
  if (s.is_boolean()) return s.get<bool>();
  if (s.contains("$ref") && !ValidateAgainstRoot(v, s["$ref"], root)) return false;
  if (s.contains("allOf")) {
    for (const Json& part : s["allOf"]) {
      if (!Validate(v, part, root)) return false;
    }
  }
  for (const char* key : {"anyOf", "oneOf"}) {
    if (!s.contains(key)) continue;
    bool any = false;
    for (const Json& part : s[key]) any = any || Validate(v, part, root);
    if (!any) return false;
  }
  if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end()) {
    return false;
  }
  if (s.contains("const") && s["const"] != v) return false;
  if (s.contains("type")) {
    const Json types = s["type"].is_array() ? s["type"] : Json::array({s["type"]});
    bool any = false;
    for (const Json& t : types) {
      const std::string name = t;
      any = any || (name == "null" && v.is_null()) || (name == "boolean" && v.is_boolean()) ||
            (name == "number" && v.is_number()) || (name == "string" && v.is_string()) ||
            (name == "array" && v.is_array()) || (name == "object" && v.is_object()) ||
            (name == "integer" && v.is_number() && v.get<double>() == std::floor(v.get<double>()));
    }
    if (s.value("nullable", false) && v.is_null()) any = true;
    if (!any) return false;
  }
  if (v.is_string()) {
    const std::string text = v;
    const size_t n = CodepointCount(text);
    if (s.contains("minLength") && n < s["minLength"].get<size_t>()) return false;
    if (s.contains("maxLength") && n > s["maxLength"].get<size_t>()) return false;
    if (s.contains("pattern") &&
        !std::regex_search(Wide(text), std::wregex(Wide(s["pattern"].get<std::string>())))) {
      return false;
    }
    if (s.contains("format") && !ValidFormat(s["format"], text)) return false;
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    if (s.contains("minimum") && x < s["minimum"].get<double>()) return false;
    if (s.contains("maximum") && x > s["maximum"].get<double>()) return false;
    if (s.contains("exclusiveMinimum") && x <= s["exclusiveMinimum"].get<double>()) return false;
    if (s.contains("exclusiveMaximum") && x >= s["exclusiveMaximum"].get<double>()) return false;
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) return false;
    if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>()) return false;
    const size_t k = s.contains("prefixItems") ? s["prefixItems"].size() : 0;
    for (size_t i = 0; i < v.size(); ++i) {
      if (i < k) {
        if (!Validate(v[i], s["prefixItems"][i], root)) return false;
      } else if (s.contains("items") && !Validate(v[i], s["items"], root)) {
        return false;
      }
    }
  }
  if (v.is_object()) {
    for (const Json& name : s.value("required", Json::array())) {
      if (!v.contains(name.get<std::string>())) return false;
    }
    const Json properties = s.value("properties", Json::object());
    for (const auto& [key, value] : v.items()) {
      if (properties.contains(key)) {
        if (!Validate(value, properties[key], root)) return false;
      } else if (s.contains("additionalProperties") &&
                 !Validate(value, s["additionalProperties"], root)) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace qvl::grammar_test
