// The engine's limits are the ones of record; a request parser (the HTTP routes, `qvl
// run --request`) takes them from the loaded engine, so that it refuses early with the
// same numbers the engine would and no limit has a second default that could disagree.
#pragma once

#include "engine/engine.h"
#include "server/chat_request.h"

namespace qvl {

// Sets the image count, image bytes, pixels per image and video token, video limits and
// chat template of `policy` from `engine`.
void TakeEngineLimits(const Engine& engine, ChatRequestPolicy* policy);

}  // namespace qvl
