#include "text/template_json.h"

#include <cstdio>

namespace qvl {
namespace {

void AppendString(const std::string& s, std::string* out) {
  out->push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out->append(buf);
        } else {
          out->push_back(ch);
        }
    }
  }
  out->push_back('"');
}

void Append(const nlohmann::ordered_json& value, std::string* out) {
  switch (value.type()) {
    case nlohmann::ordered_json::value_t::object: {
      out->push_back('{');
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        if (!first) out->append(", ");
        first = false;
        AppendString(key, out);
        out->append(": ");
        Append(item, out);
      }
      out->push_back('}');
      break;
    }
    case nlohmann::ordered_json::value_t::array: {
      out->push_back('[');
      for (size_t i = 0; i < value.size(); ++i) {
        if (i > 0) out->append(", ");
        Append(value[i], out);
      }
      out->push_back(']');
      break;
    }
    case nlohmann::ordered_json::value_t::string:
      AppendString(value.get_ref<const std::string&>(), out);
      break;
    default:
      // Numbers, booleans and null: nlohmann writes them as Python does (shortest
      // round-trip floats with a ".0" on whole ones, "true", "null").
      out->append(value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  }
}

}  // namespace

std::string TemplateJson(const nlohmann::ordered_json& value) {
  std::string out;
  Append(value, &out);
  return out;
}

}  // namespace qvl
