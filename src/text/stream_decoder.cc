#include "text/stream_decoder.h"

#include "text/utf8.h"

namespace qvl {

std::string StreamDecoder::Feed(int32_t id) {
  if (skip_special_ && tokenizer_->IsSpecial(id)) return {};
  const std::string_view bytes = tokenizer_->TokenBytes(id);
  if (pending_.empty() && text::IsValidUtf8(bytes)) return std::string(bytes);

  pending_.append(bytes);
  std::string out;
  size_t pos = 0;
  while (pos < pending_.size()) {
    const text::Utf8Sequence seq = text::ScanUtf8(pending_, pos);
    if (seq.status == text::Utf8Status::kTruncated) break;
    if (seq.status == text::Utf8Status::kValid) {
      out.append(pending_, pos, seq.length);
    } else {
      out.append(text::kReplacementCharacter);
    }
    pos += seq.length;
  }
  pending_.erase(0, pos);
  return out;
}

std::string StreamDecoder::Flush() {
  std::string out;
  text::AppendReplacingInvalidUtf8(pending_, &out);
  pending_.clear();
  return out;
}

}  // namespace qvl
