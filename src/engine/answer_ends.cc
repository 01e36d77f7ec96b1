#include "engine/answer_ends.h"

#include <algorithm>

#include "base/field_error.h"
#include "engine/request_ranges.h"

namespace qvl {

void PrepareAnswerEnds(const GenerationRequest& request, int64_t vocab, int64_t room,
                       OutputLimits* limits) {
  const std::vector<int32_t>& ids = request.stop_token_ids;
  if (ids.size() > static_cast<size_t>(request_ranges::kMaxStopTokenIds)) {
    FailField(ErrorCode::kInvalidArgument, "stop_token_ids", "at most ",
              request_ranges::kMaxStopTokenIds, " stop token ids are supported, got ", ids.size());
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    CheckTokenId(StrCat("stop_token_ids[", i, "]"), ids[i], vocab);
  }
  limits->stop_token_ids = ids;

  const int min_tokens = request.min_tokens;
  CheckInRange(request_ranges::kMinTokens, min_tokens);
  if (request.max_tokens > 0 && min_tokens > request.max_tokens) {
    FailField(ErrorCode::kInvalidArgument, "min_tokens", "must be at most ",
              request.max_tokens_field, " (", request.max_tokens, "), got ", min_tokens);
  }
  if (min_tokens > room) {
    FailField(ErrorCode::kContextLength, "min_tokens", "asks for ", min_tokens,
              " tokens, but the context leaves ", room, " after the prompt");
  }
  limits->min_tokens = min_tokens;
  limits->max_tokens = std::max(limits->max_tokens, min_tokens);
}

}  // namespace qvl
