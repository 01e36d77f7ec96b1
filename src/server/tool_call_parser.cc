#include "server/tool_call_parser.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>

#include "server/json_depth.h"

namespace qvl {
namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";
std::string NewCallId() {
  thread_local std::mt19937_64 random(std::random_device{}());
  static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) id.push_back(kAlphabet[random() % (sizeof(kAlphabet) - 1)]);
  return id;
}

// Length of the longest suffix of `text` that is a proper prefix of `tag`.
size_t PartialTagAtEnd(std::string_view text, std::string_view tag) {
  for (size_t n = std::min(text.size(), tag.size() - 1); n > 0; --n) {
    if (text.substr(text.size() - n) == tag.substr(0, n)) return n;
  }
  return 0;
}

}  // namespace

bool ToolCallParser::ParseCall(std::string_view body, Output* out) {
  const nlohmann::ordered_json call = ParseBoundedJson<nlohmann::ordered_json>(body);
  if (!call.is_object()) return false;
  const auto name = call.find("name");
  if (name == call.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
    return false;
  }
  const auto arguments = call.find("arguments");
  ParsedToolCall parsed;
  parsed.id = NewCallId();
  parsed.name = name->get<std::string>();
  if (arguments == call.end() || arguments->is_null()) {
    parsed.arguments = "{}";
  } else if (arguments->is_string()) {
    parsed.arguments = arguments->get<std::string>();
  } else {
    parsed.arguments =
        arguments->dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }
  out->calls.push_back(std::move(parsed));
  out->call_offsets.push_back(out->content.size());
  ++calls_;
  return true;
}

void ToolCallParser::Feed(std::string_view text, Output* out) {
  pending_.append(text);
  for (;;) {
    if (!in_call_) {
      const size_t open = pending_.find(kOpen);
      if (open == std::string::npos) {
        const size_t keep = PartialTagAtEnd(pending_, kOpen);
        out->content.append(pending_, 0, pending_.size() - keep);
        pending_.erase(0, pending_.size() - keep);
        return;
      }
      out->content.append(pending_, 0, open);
      pending_.erase(0, open + kOpen.size());
      in_call_ = true;
    }
    // The text before close_from_ was searched by an earlier piece: a call's body is
    // held whole until its closing tag, and searching it all again each piece would
    // cost the square of its length.
    const size_t close = pending_.find(kClose, close_from_);
    if (close == std::string::npos) {
      close_from_ = pending_.size() - std::min(pending_.size(), kClose.size() - 1);
      return;
    }
    close_from_ = 0;
    if (!ParseCall(std::string_view(pending_).substr(0, close), out)) {
      out->content.append(kOpen).append(pending_, 0, close + kClose.size());
    }
    pending_.erase(0, close + kClose.size());
    in_call_ = false;
  }
}

void ToolCallParser::Finish(Output* out) {
  if (in_call_ && !ParseCall(pending_, out)) out->content.append(kOpen).append(pending_);
  if (!in_call_) out->content.append(pending_);
  pending_.clear();
  in_call_ = false;
  close_from_ = 0;
}

nlohmann::json ArgumentsObject(std::string_view arguments) {
  nlohmann::json object = ParseBoundedJson<nlohmann::json>(arguments);
  if (!object.is_object()) return nlohmann::json::object();
  return object;
}

}  // namespace qvl
