// libFuzzer target: ReasoningSplitter on arbitrary text fed in pieces the input chooses.
// The reasoning and reply must not depend on the pieces, and must be the text before
// and after the first "</think>" with only the newlines around the tag dropped (all of
// it reasoning, trailing newlines dropped, when no tag came).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "text/fuzz_pieces.h"
#include "text/reasoning_split.h"

namespace {

struct Split {
  std::string reasoning, content;
  bool answering = false;
  bool operator==(const Split&) const = default;
};

Split Stream(const std::vector<std::string_view>& pieces) {
  qvl::ReasoningSplitter splitter;
  Split split;
  qvl::ReasoningSplitter::Output out;
  for (const std::string_view piece : pieces) {
    const bool was_answering = splitter.answering();
    const size_t reasoning_before = out.reasoning.size();
    splitter.Feed(piece, &out);
    // Once the reply has begun no more reasoning comes, and the reply waits for the tag.
    if (was_answering && out.reasoning.size() != reasoning_before) std::abort();
    if (!splitter.answering() && !out.content.empty()) std::abort();
  }
  split.answering = splitter.answering();
  splitter.Finish(&out);
  split.reasoning = out.reasoning;
  split.content = out.content;
  return split;
}

std::string_view StripNewlines(std::string_view text, bool front, bool back) {
  while (front && !text.empty() && text.front() == '\n') text.remove_prefix(1);
  while (back && !text.empty() && text.back() == '\n') text.remove_suffix(1);
  return text;
}

Split Expected(std::string_view text) {
  const size_t tag = text.find(qvl::kReasoningEnd);
  if (tag == std::string_view::npos)
    return {std::string(StripNewlines(text, true, true)), "", false};
  return {std::string(StripNewlines(text.substr(0, tag), true, true)),
          std::string(StripNewlines(text.substr(tag + qvl::kReasoningEnd.size()), true, false)),
          true};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<size_t> lengths = qvl::fuzz::TakePieceLengths(&text);
  const Split whole = Stream({text});
  if (whole != Expected(text)) std::abort();
  if (Stream(qvl::fuzz::CutIntoPieces(text, lengths)) != whole) std::abort();
  if (Stream(qvl::fuzz::Bytes(text)) != whole) std::abort();
  return 0;
}
