// libFuzzer target: ToolCallParser on arbitrary answers fed in pieces the input chooses.
// Content, calls and where each call was written must not depend on the pieces, nor on
// whether they come through Feed/Finish or FeedInOrder; and the answer must be exactly
// the content with each call's "<tool_call>" block put back where it was written, each
// block's JSON naming that call with those arguments: nothing lost, nothing invented.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/tool_call_parser.h"
#include "text/fuzz_pieces.h"

namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

struct Parsed {
  std::string content;
  std::vector<size_t> call_offsets;
  std::vector<std::pair<std::string, std::string>> calls;  // name, arguments
  bool operator==(const Parsed&) const = default;
};

void CheckId(const qvl::ParsedToolCall& call) {
  if (call.id.size() != 29 || !call.id.starts_with("call_")) std::abort();
}

Parsed Stream(const std::vector<std::string_view>& pieces) {
  qvl::ToolCallParser parser;
  qvl::ToolCallParser::Output out;
  for (const std::string_view piece : pieces) parser.Feed(piece, &out);
  parser.Finish(&out);
  if (out.calls.size() != out.call_offsets.size()) std::abort();
  if (parser.calls() != static_cast<int>(out.calls.size())) std::abort();
  Parsed parsed{out.content, out.call_offsets, {}};
  for (const qvl::ParsedToolCall& call : out.calls) {
    CheckId(call);
    parsed.calls.emplace_back(call.name, call.arguments);
  }
  return parsed;
}

Parsed StreamInOrder(const std::vector<std::string_view>& pieces) {
  qvl::ToolCallParser parser;
  qvl::ToolCallParser::Output scratch;
  Parsed parsed;
  const auto on_text = [&](std::string_view text) { parsed.content += text; };
  const auto on_call = [&](const qvl::ParsedToolCall& call) {
    CheckId(call);
    parsed.call_offsets.push_back(parsed.content.size());
    parsed.calls.emplace_back(call.name, call.arguments);
  };
  for (size_t i = 0; i < pieces.size(); ++i) {
    parser.FeedInOrder(pieces[i], i + 1 == pieces.size(), &scratch, on_text, on_call);
  }
  if (pieces.empty()) parser.FeedInOrder("", true, &scratch, on_text, on_call);
  return parsed;
}

// The call a block's JSON makes, as the parser must report it.
void CheckCall(std::string_view body, const std::pair<std::string, std::string>& call) {
  const nlohmann::ordered_json json = nlohmann::ordered_json::parse(body, nullptr, false);
  if (!json.is_object() || !json.contains("name") || json["name"] != call.first) std::abort();
  const auto arguments = json.find("arguments");
  if (arguments == json.end() || arguments->is_null()) {
    if (call.second != "{}") std::abort();
  } else if (arguments->is_string()) {
    if (*arguments != call.second) std::abort();
  } else if (nlohmann::ordered_json::parse(call.second, nullptr, false) != *arguments) {
    std::abort();
  }
}

// The answer rebuilt from the content and the calls' blocks, checked against `text`.
void CheckAgainstText(std::string_view text, const Parsed& parsed) {
  size_t written = 0;
  for (size_t i = 0; i < parsed.calls.size(); ++i) {
    if (parsed.call_offsets[i] < written || parsed.call_offsets[i] > parsed.content.size()) {
      std::abort();
    }
    const std::string_view before =
        std::string_view(parsed.content).substr(written, parsed.call_offsets[i] - written);
    written = parsed.call_offsets[i];
    if (!text.starts_with(before)) std::abort();
    text.remove_prefix(before.size());
    if (!text.starts_with(kOpen)) std::abort();
    text.remove_prefix(kOpen.size());
    // A block ends at its first closing tag; only the answer's end closes the last one.
    const size_t close = text.find(kClose);
    if (close == std::string_view::npos && i + 1 != parsed.calls.size()) std::abort();
    CheckCall(text.substr(0, close), parsed.calls[i]);
    text.remove_prefix(close == std::string_view::npos ? text.size() : close + kClose.size());
  }
  if (text != std::string_view(parsed.content).substr(written)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<size_t> lengths = qvl::fuzz::TakePieceLengths(&text);
  const Parsed whole = Stream({text});
  CheckAgainstText(text, whole);
  const std::vector<std::string_view> pieces = qvl::fuzz::CutIntoPieces(text, lengths);
  if (Stream(pieces) != whole) std::abort();
  if (StreamInOrder(pieces) != whole) std::abort();
  if (Stream(qvl::fuzz::Bytes(text)) != whole) std::abort();
  if (StreamInOrder(qvl::fuzz::Bytes(text)) != whole) std::abort();
  return 0;
}
