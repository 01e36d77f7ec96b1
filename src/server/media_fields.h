// The request-wide media settings that every chat-shaped API (/v1/chat/completions,
// /v1/responses) reads alike: the image budget (min_pixels / max_pixels,
// min_image_tokens / max_image_tokens, mm_processor_kwargs), the video defaults, and the
// limits the messages' images and videos are loaded under.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/request.h"
#include "server/chat_messages.h"
#include "server/chat_request.h"
#include "server/request_fields.h"

namespace qvl {

// The image budget, given as pixels or as image tokens, at the top level or in
// mm_processor_kwargs; all spellings of a bound that are given must agree.
void ParseImageBudget(const RequestObject& body, int64_t pixels_per_token,
                      ImageBudgetRequest* budget);

// The request-wide video settings, as defaults for every video part: the top-level
// min_video_tokens / max_video_tokens (the video's whole cost in the prompt, its
// timestamps included) and the video keys of mm_processor_kwargs. There a
// flat key reaches every modality whose processor declares it (transformers'
// ProcessorMixin): `size` (shortest_edge / longest_edge: pixels over all frames of a
// video) is the image processor's and the video processor's, min_pixels / max_pixels
// only the image processor's, fps / num_frames / min_frames / max_frames only the video
// processor's (Qwen3VLVideoProcessor).
VideoInput ParseVideoDefaults(const RequestObject& body, int64_t pixels_per_video_token);

// A video part's own keys win over the request's: its rate or frame count over both of
// the request's, each of its bounds (a minimum or a maximum, in pixels or tokens) over
// the request's same bound.
void ApplyVideoDefaults(const VideoInput& defaults, std::vector<VideoInput>* videos);

// What the policy allows the messages of one request.
MessageLimits MessageLimitsOf(const ChatRequestPolicy& policy);

}  // namespace qvl
