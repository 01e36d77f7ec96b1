// POST /tokenize, /apply-template and /detokenize, as llama-server and vLLM offer them:
// what a prompt costs in tokens before sending it, its text, and the text of token ids. One answer
// satisfies both servers' clients:
//   /tokenize   {"tokens": [ids], "count", "max_model_len"} (vLLM; llama-server reads
//               "tokens"), with_pieces: tokens as {"id", "piece"} (piece: the text, or
//               its bytes when they are not whole UTF-8), return_token_strs: "token_strs";
//               for messages, "images" and "videos": each one's grid and tokens.
//   /detokenize {"prompt": text, "content": text} (vLLM's key, llama-server's key).
// Messages go through the chat route's whole preparation (chat template, image decoding
// and resizing, video sampling) but no vision encoding, so the count is the prompt a
// chat completion of the same body would prefill.
#pragma once

#include <httplib.h>

#include "server/generation_route.h"

namespace qvl {

void HandleTokenize(const GenerationRouteContext& context, const httplib::Request& req,
                    httplib::Response& res, const httplib::ContentReader& reader);
// POST /apply-template (llama-server's): {"messages": [...], ...} as /tokenize reads them
// -> {"prompt": the chat template's text}, with no inference: each image or video is the
// template's placeholder (one pad) where the prompt expands it. A body without messages is
// a 400 naming "messages".
void HandleApplyTemplate(const GenerationRouteContext& context, const httplib::Request& req,
                         httplib::Response& res, const httplib::ContentReader& reader);
void HandleDetokenize(const GenerationRouteContext& context, const httplib::Request& req,
                      httplib::Response& res, const httplib::ContentReader& reader);

}  // namespace qvl
