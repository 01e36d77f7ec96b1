#include "server/native_completion_request.h"

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "base/field_error.h"
#include "engine/request_ranges.h"
#include "server/completion_request.h"
#include "server/generation_fields.h"
#include "server/request_fields.h"

namespace qvl {
namespace {

// llama-server's `false` bias bans the token; qvl's strongest bias, -100, does as much.
constexpr float kBanBias = -100;

// llama-server's mixed prompt: token ids and texts, at least one of each.
bool IsMixedPrompt(const nlohmann::json& prompt) {
  if (!prompt.is_array()) return false;
  bool number = false, text = false;
  for (const nlohmann::json& element : prompt) {
    number |= element.is_number();
    text |= element.is_string();
  }
  return number && text;
}

// One prompt at `field`: a string, token ids, or ids and texts mixed (each text
// tokenized as a raw prompt is, the pieces joined in order).
void ParseNativePrompt(const nlohmann::json& prompt, const std::string& field,
                       const TextTokenizer& tokenize, GenerationRequest* g) {
  if (!IsMixedPrompt(prompt)) {
    ParseCompletionPrompt(prompt, field, g);
    return;
  }
  std::vector<int32_t> ids;
  for (size_t i = 0; i < prompt.size(); ++i) {
    const nlohmann::json& element = prompt[i];
    if (element.is_string()) {
      const std::vector<int32_t> piece = tokenize(element.get_ref<const std::string&>());
      ids.insert(ids.end(), piece.begin(), piece.end());
    } else {
      ids.push_back(ParseTokenId(element, IndexField(field, i)));
    }
  }
  g->prompt_tokens = std::move(ids);
  g->messages_field = field;
}

// llama-server's list form of logit_bias, [[token, bias], ...], as the object form qvl's
// parser reads ({"id": bias}): a token is an id or a text (each of its tokens biased), a
// bias a number or false (banned).
nlohmann::json LogitBiasObject(const nlohmann::json& list, const TextTokenizer& tokenize) {
  nlohmann::json out = nlohmann::json::object();
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string field = IndexField("logit_bias", i);
    const nlohmann::json& pair = list[i];
    if (!pair.is_array() || pair.size() != 2) {
      FailField(ErrorCode::kInvalidArgument, field, "expected [token, bias], got ", pair.dump());
    }
    const nlohmann::json& bias = pair[1];
    if (!bias.is_number() && bias != false) {
      FailField(ErrorCode::kInvalidArgument, IndexField(field, 1),
                "expected a number or false, got ", JsonKind(bias));
    }
    const float value = bias.is_number() ? bias.get<float>() : kBanBias;
    std::vector<int32_t> ids;
    if (pair[0].is_string()) {
      ids = tokenize(pair[0].get_ref<const std::string&>());
    } else {
      ids.push_back(ParseTokenId(pair[0], IndexField(field, 0)));
    }
    for (const int32_t id : ids) out[std::to_string(id)] = value;
  }
  return out;
}

// Fields of llama-server's /completion or of the OpenAI APIs that change the answer or its
// shape in ways qvl does not serve here: refused unless absent, null or one of `neutral`.
void RefuseUnless(const RequestObject& body, const char* key,
                  std::initializer_list<nlohmann::json> neutral, std::string_view why) {
  const nlohmann::json* value = body.Find(key);
  if (value == nullptr) return;
  for (const nlohmann::json& n : neutral) {
    if (*value == n) return;
  }
  FailField(ErrorCode::kInvalidArgument, key, "is not supported on /completion (", why,
            "); leave it out");
}

void RefuseUnsupported(const RequestObject& body) {
  const nlohmann::json none = nlohmann::json::array();
  RefuseUnless(body, "echo", {false}, "use /v1/completions for echo");
  RefuseUnless(body, "logprobs", {false}, "n_probs asks for completion_probabilities");
  RefuseUnless(body, "prompt_logprobs", {}, "use /v1/completions with echo and logprobs");
  RefuseUnless(body, "suffix", {""}, "no text insertion");
  RefuseUnless(body, "best_of", {1}, "one answer per prompt");
  RefuseUnless(body, "tools", {none},
               "a raw prompt has no chat template; use /v1/chat/completions");
  RefuseUnless(body, "tool_choice", {"none", "auto"}, "a raw prompt has no tools");
  RefuseUnless(body, "image_data", {none}, "send images to /v1/chat/completions");
  RefuseUnless(body, "multimodal_data", {none}, "send images to /v1/chat/completions");
  RefuseUnless(body, "post_sampling_probs", {false},
               "probabilities are the model's, before sampling");
  RefuseUnless(body, "response_fields", {none}, "the response has all its fields");
  RefuseUnless(body, "n_indent", {0}, "no indentation stop");
  RefuseUnless(body, "t_max_predict_ms", {0}, "no time limit; use n_predict");
  RefuseUnless(body, "lora", {none}, "no LoRA adapters");
  RefuseUnless(body, "min_keep", {0}, "the samplers keep what their own settings keep");
}

}  // namespace

NativeCompletionRequest ParseNativeCompletionRequest(std::string_view text,
                                                     const ChatRequestPolicy& policy,
                                                     const TextTokenizer& tokenize) {
  nlohmann::json json = ParseJsonBody(text);
  NativeCompletionRequest out;
  {
    const RequestObject native(json, "");
    out.model = ParseModel(native, policy.model_names);
    RefuseUnsupported(native);
    const ParamRange& range = request_ranges::kTopLogprobs;
    out.n_probs =
        static_cast<int>(native.Int("n_probs", 0, static_cast<int64_t>(range.max)).value_or(0));
    out.return_tokens = native.Bool("return_tokens").value_or(false);
    // Checked, then unused: qvl's prefix cache serves every request (cache_prompt's
    // reuse is always on), and qvl has no slots, so any slot's answer is the same; clients
    // send back the id_slot (0) they were answered with.
    native.Bool("cache_prompt");
    native.Int("id_slot", -1, INT32_MAX);
    // Checked, then unused: per-token timings are a display aid; the final event has them.
    native.Bool("timings_per_token");
    if (const nlohmann::json* bias = native.Find("logit_bias");
        bias != nullptr && bias->is_array()) {
      json["logit_bias"] = LogitBiasObject(*bias, tokenize);
    }
    // n_predict 0: the prompt is read (into the prefix cache) and nothing is answered, as
    // llama-server does; the engine reads it as for one token, which the result leaves out.
    if (const nlohmann::json* n = native.Find("n_predict");
        n != nullptr && n->is_number_integer() && *n == 0 && native.Find("max_tokens") == nullptr) {
      out.prompt_only = true;
      json["n_predict"] = 1;
    }
  }
  // Read above; the shared parser refuses it (the OpenAI routes ask with logprobs).
  json.erase("n_probs");
  const RequestObject body(json, "");
  CompletionRequest shared;
  GenerationRequest g;
  ParseSharedCompletionFields(body, text, policy, &shared, &g);
  if (g.n != 1) {
    FailField(ErrorCode::kInvalidArgument, "n",
              "is not supported on /completion (one answer per prompt); use /v1/completions for ",
              g.n, " answers");
  }
  out.stream = shared.stream;
  out.return_progress = shared.return_progress;
  // The token ids come with the logprobs: 0 alternatives when only the ids are asked for,
  // or streamed (llama-server's events always carry them).
  if (out.n_probs > 0) {
    g.top_logprobs = out.n_probs;
  } else if (out.return_tokens || out.stream) {
    g.top_logprobs = 0;
  }
  // A string, ids or a mixed prompt: one prompt; any other array lists prompts, each of
  // those kinds (llama-server's shapes).
  out.generations = ParsePromptList(
      body, g,
      [](const nlohmann::json& p) {
        return !p.is_array() || IsMixedPrompt(p) || (!p.empty() && p.front().is_number());
      },
      [&](const nlohmann::json& p, const std::string& field, GenerationRequest* one) {
        ParseNativePrompt(p, field, tokenize, one);
      });
  return out;
}

}  // namespace qvl
