#include "server/server_dialects.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/field_error.h"
#include "engine/request_ranges.h"
#include "grammar/gbnf_grammar.h"
#include "grammar/grammar.h"
#include "server/json_depth.h"
#include "server/output_controls.h"
#include "text/chat_template.h"

namespace qvl {
namespace {

constexpr char kUseResponseFormat[] =
    "; for JSON output send response_format {\"type\": \"json_schema\", \"json_schema\": "
    "{\"name\", \"schema\"}}";

// llama-server's n_predict: -1 (until the end) and -2 (until the context is full) are the
// default answer length; max_tokens and max_completion_tokens, OpenAI's names for the same
// limit, win when given.
void ParseNPredict(const RequestObject& body, GenerationRequest* g) {
  const ParamRange& range = request_ranges::kMaxTokens;
  const std::optional<int64_t> n = body.Int("n_predict", -2, static_cast<int64_t>(range.max));
  if (!n || *n < 0 || g->max_tokens != 0) return;
  if (!range.Contains(static_cast<double>(*n))) {
    FailField(ErrorCode::kInvalidArgument, "n_predict", "must be -1, -2 or between ",
              static_cast<int64_t>(range.min), " and ", static_cast<int64_t>(range.max), ", got ",
              *n);
  }
  g->max_tokens = static_cast<int>(*n);
  g->max_tokens_field = "n_predict";
}

// vLLM's token id lists (stop_token_ids, allowed_token_ids): each an integer within
// int32 (the vocabulary and their count are the engine's to check).
std::vector<int32_t> TokenIds(const nlohmann::json& ids, const char* key) {
  RequireArray(ids, key);
  std::vector<int32_t> out;
  for (size_t i = 0; i < ids.size(); ++i) {
    const nlohmann::json& id = ids[i];
    if (!id.is_number_integer() || id.get<int64_t>() < INT32_MIN || id.get<int64_t>() > INT32_MAX) {
      FailField(ErrorCode::kInvalidArgument, IndexField(key, i),
                "expected a token id (an integer), got ", id.dump());
    }
    out.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return out;
}

void ParseStopTokenIds(const RequestObject& body, GenerationRequest* g) {
  if (const nlohmann::json* ids = body.Find("stop_token_ids")) {
    g->stop_token_ids = TokenIds(*ids, "stop_token_ids");
  }
}

// vLLM's allowed_token_ids (null: every token; an empty list allows none, as vLLM refuses
// it) and bad_words (strings), for the engine to check and tokenize (PrepareTokenBans).
void ParseTokenBans(const RequestObject& body, GenerationRequest* g) {
  if (const nlohmann::json* ids = body.Find("allowed_token_ids"); ids && !ids->is_null()) {
    g->allowed_token_ids = TokenIds(*ids, "allowed_token_ids");
    if (g->allowed_token_ids.empty()) {
      FailField(ErrorCode::kInvalidArgument, "allowed_token_ids",
                "must list at least one token id (null allows every token)");
    }
  }
  if (const nlohmann::json* words = body.Find("bad_words"); words && !words->is_null()) {
    RequireArray(*words, "bad_words");
    for (size_t i = 0; i < words->size(); ++i) {
      const nlohmann::json& word = (*words)[i];
      if (!word.is_string()) {
        FailField(ErrorCode::kInvalidArgument, IndexField("bad_words", i),
                  "expected a string, got ", word.dump());
      }
      g->bad_words.push_back(word.get<std::string>());
    }
  }
}

// A field that changes the answer unless it holds `neutral` (or is absent or null).
void RefuseUnlessNeutral(const RequestObject& body, const char* key, const nlohmann::json& neutral,
                         std::string_view why) {
  const nlohmann::json* value = body.Find(key);
  if (value != nullptr && *value != neutral) {
    FailField(ErrorCode::kInvalidArgument, key, "is not supported (", why, "); leave it out",
              neutral.is_null() ? "" : StrCat(" or at ", neutral.dump()));
  }
}

struct SamplerName {
  const char* name;
  char letter;                      // llama-server's one-letter spelling
  std::optional<SamplerStep> step;  // none: a sampler qvl does not have, which its own
                                    // fields keep off, so it is no link at all
};

// llama-server's names for the links of its chain (common/sampling.cpp), one per link;
// "temp", "top-k", "nucleus" and the like are its spellings for names here.
constexpr SamplerName kSamplerNames[] = {
    {"penalties", 'e', SamplerStep::kPenalties},
    {"top_k", 'k', SamplerStep::kTopK},
    {"top_p", 'p', SamplerStep::kTopP},
    {"min_p", 'm', SamplerStep::kMinP},
    {"temperature", 't', SamplerStep::kTemperature},
    {"typ_p", 'y', SamplerStep::kTypicalP},
    {"xtc", 'x', SamplerStep::kXtc},
    {"top_n_sigma", 's', SamplerStep::kTopNSigma},
    {"dry", 'd', std::nullopt},
    {"infill", 'i', std::nullopt},
};
constexpr std::pair<const char*, const char*> kSamplerAltNames[] = {
    {"temp", "temperature"},        {"top-k", "top_k"}, {"top-p", "top_p"},
    {"nucleus", "top_p"},           {"min-p", "min_p"}, {"typical", "typ_p"},
    {"typical-p", "typ_p"},         {"typ-p", "typ_p"}, {"typ", "typ_p"},
    {"top-n-sigma", "top_n_sigma"},
};

const SamplerName* FindSampler(std::string_view name) {
  for (const auto& [alt, canonical] : kSamplerAltNames) {
    if (name == alt) name = canonical;
  }
  for (const SamplerName& s : kSamplerNames) {
    if (name == s.name || (name.size() == 1 && name[0] == s.letter)) return &s;
  }
  return nullptr;
}

// llama-server's `samplers`: its chain, as a list of names or a string of letters
// ("edkypmxt"). Each link at most once.
std::vector<SamplerStep> ParseSamplerChain(const nlohmann::json& value) {
  std::vector<SamplerStep> chain;
  std::vector<const SamplerName*> seen;
  const auto add = [&](std::string_view name) {
    const SamplerName* sampler = FindSampler(name);
    if (sampler == nullptr) {
      FailField(ErrorCode::kInvalidArgument, "samplers", "unknown sampler \"", name,
                "\"; qvl has penalties (e), top_k (k), top_p (p), min_p (m), temperature (t), "
                "typ_p (y), xtc (x) and top_n_sigma (s), and takes dry and infill while they "
                "are off");
    }
    if (std::find(seen.begin(), seen.end(), sampler) != seen.end()) {
      FailField(ErrorCode::kInvalidArgument, "samplers", "lists ", sampler->name, " twice");
    }
    seen.push_back(sampler);
    if (sampler->step) chain.push_back(*sampler->step);
  };
  if (value.is_string()) {
    const std::string& letters = value.get_ref<const std::string&>();
    for (size_t i = 0; i < letters.size(); ++i) add(std::string_view(letters).substr(i, 1));
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      if (!value[i].is_string()) {
        FailField(ErrorCode::kInvalidArgument, IndexField("samplers", i),
                  "expected a sampler's name, got ", JsonKind(value[i]));
      }
      add(value[i].get_ref<const std::string&>());
    }
  } else {
    FailField(ErrorCode::kInvalidArgument, "samplers",
              "expected a list of sampler names or a string of their letters, got ",
              JsonKind(value));
  }
  return chain;
}

// llama-server's sampling fields on its OpenAI routes. repeat_penalty is its name for the
// repetition penalty; top_n_sigma, XTC and the dynamic temperature are read (typical_p
// and Mirostat with the other sampling fields); the samplers qvl does not have are taken only at
// the value that turns them off (what llama-server's web UI sends by default), as Ollama's options
// are.
void ParseLlamaServerSampling(const RequestObject& body, SamplingParams* s) {
  const ParamRange& range = request_ranges::kRepetitionPenalty;
  if (const std::optional<double> penalty =
          body.Number("repeat_penalty", range.min, range.max, range.min_exclusive)) {
    if (s->repetition_penalty && *s->repetition_penalty != static_cast<float>(*penalty)) {
      FailField(ErrorCode::kInvalidArgument, "repeat_penalty",
                "cannot be combined with repetition_penalty (llama-server's name for it) at "
                "another value");
    }
    s->repetition_penalty = static_cast<float>(*penalty);
  }
  // The penalty's window. qvl's, as transformers', is the whole prompt and answer:
  // llama-server's -1. Another window matters only beside a penalty that is on.
  if (const std::optional<int64_t> window =
          body.Int("repeat_last_n", -1, std::numeric_limits<int32_t>::max())) {
    if (*window != -1 && s->repetition_penalty && *s->repetition_penalty != 1.0f) {
      FailField(ErrorCode::kInvalidArgument, "repeat_last_n",
                "is not supported beside a repetition penalty (qvl's counts every token of the "
                "prompt and the answer); leave it out or at -1");
    }
  }
  RefuseUnlessNeutral(body, "n_probs", 0,
                      "token probabilities come with logprobs and top_logprobs");
  for (const auto& [range, value] :
       {std::pair{&request_ranges::kTopNSigma, &s->top_n_sigma},
        std::pair{&request_ranges::kXtcProbability, &s->xtc_probability},
        std::pair{&request_ranges::kXtcThreshold, &s->xtc_threshold},
        std::pair{&request_ranges::kDynatempRange, &s->dynatemp_range},
        std::pair{&request_ranges::kDynatempExponent, &s->dynatemp_exponent}}) {
    if (const std::optional<double> v =
            body.Number(range->name, range->min, range->max, range->min_exclusive)) {
      *value = static_cast<float>(*v);
    }
  }
  RefuseUnlessNeutral(body, "dry_multiplier", 0, "DRY repetition penalties");
  if (const nlohmann::json* samplers = body.Find("samplers")) {
    s->chain = ParseSamplerChain(*samplers);
  }
}

// A schema given as a JSON object or, as vLLM also takes it, as JSON text.
nlohmann::ordered_json SchemaValue(const nlohmann::ordered_json& value, const std::string& field) {
  if (value.is_object()) return value;
  if (value.is_string()) {
    nlohmann::ordered_json parsed =
        ParseBoundedJson<nlohmann::ordered_json>(value.get_ref<const std::string&>());
    if (parsed.is_object()) return parsed;
  }
  FailField(ErrorCode::kInvalidArgument, field, "expected a JSON schema (an object), got ",
            JsonKind(nlohmann::json(value)));
}

// What a guided-decoding field binds the answer to.
enum class GuidedKind { kSchema, kJsonObject, kChoice, kRegex, kGrammar };

// One field asking for guided decoding.
struct Guided {
  std::string key;    // its top-level key: "guided_regex", "structured_outputs"
  std::string field;  // where its value is: "guided_regex", "structured_outputs.regex"
  GuidedKind kind;
  const nlohmann::json* value;
};

struct GuidedSpelling {
  const char* key;
  GuidedKind kind;
};

// vLLM's guided_* and llama-server's json_schema and grammar, at the top level.
constexpr GuidedSpelling kTopLevelGuided[] = {
    {"guided_json", GuidedKind::kSchema},     {"json_schema", GuidedKind::kSchema},
    {"guided_choice", GuidedKind::kChoice},   {"guided_regex", GuidedKind::kRegex},
    {"guided_grammar", GuidedKind::kGrammar}, {"grammar", GuidedKind::kGrammar},
};
// vLLM's structured_outputs kinds, and its settings that leave the answer's form as it is.
constexpr GuidedSpelling kStructuredOutputs[] = {
    {"json", GuidedKind::kSchema},     {"json_object", GuidedKind::kJsonObject},
    {"choice", GuidedKind::kChoice},   {"regex", GuidedKind::kRegex},
    {"grammar", GuidedKind::kGrammar},
};
constexpr const char* kStructuredOutputsSettings[] = {"disable_any_whitespace",
                                                      "disable_additional_properties",
                                                      "whitespace_pattern", "disable_fallback"};

// The one guided-decoding field of `body`, if any; two are a 400 naming the second.
std::optional<Guided> FindGuided(const RequestObject& body) {
  std::optional<Guided> found;
  auto take = [&](Guided guided) {
    if (found) {
      FailField(ErrorCode::kInvalidArgument, guided.field, "cannot be combined with ",
                found->field);
    }
    found = std::move(guided);
  };
  for (const GuidedSpelling& spelling : kTopLevelGuided) {
    if (const nlohmann::json* value = body.Find(spelling.key)) {
      take({spelling.key, spelling.key, spelling.kind, value});
    }
  }
  const nlohmann::json* outputs = body.Find("structured_outputs");
  if (outputs == nullptr) return found;
  const RequestObject object(*outputs, "structured_outputs");
  for (const auto& item : outputs->items()) {
    // Named, not a structured binding: clang 14 (the fuzz build) cannot capture those.
    const std::string& key = item.key();
    const nlohmann::json& value = item.value();
    if (value.is_null() || std::ranges::find(kStructuredOutputsSettings, key) !=
                               std::end(kStructuredOutputsSettings)) {
      continue;
    }
    const auto* spelling = std::ranges::find_if(
        kStructuredOutputs, [&](const GuidedSpelling& s) { return key == s.key; });
    if (spelling == std::end(kStructuredOutputs)) {
      FailField(ErrorCode::kInvalidArgument, object.Field(key), "is not supported",
                kUseResponseFormat);
    }
    // json_object: false asks for nothing.
    if (spelling->kind == GuidedKind::kJsonObject && object.Bool(key) == false) continue;
    take({"structured_outputs", object.Field(key), spelling->kind, &value});
  }
  return found;
}

// guided_choice's strings.
std::vector<std::string> Choices(const nlohmann::json& value, const std::string& field) {
  RequireArray(value, field);
  std::vector<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) {
      FailField(ErrorCode::kInvalidArgument, IndexField(field, i), "expected a string, got ",
                JsonKind(value[i]));
    }
    out.push_back(value[i].get<std::string>());
  }
  return out;
}

// The grammar `guided` binds the answer to; `text` is the body as sent, from which a
// schema is re-read in the client's key order.
std::shared_ptr<const Grammar> CompileGuided(const Guided& guided, std::string_view text) {
  switch (guided.kind) {
    case GuidedKind::kSchema: {
      const nlohmann::ordered_json ordered = OrderedRequestFields(text, guided.key);
      const nlohmann::ordered_json& value = guided.key == "structured_outputs"
                                                ? ordered.at(guided.key).at("json")
                                                : ordered.at(guided.key);
      return CompileSchemaAt(SchemaValue(value, guided.field), guided.field);
    }
    case GuidedKind::kJsonObject:
      return JsonObjectGrammar();
    case GuidedKind::kChoice: {
      const std::vector<std::string> choices = Choices(*guided.value, guided.field);
      return CompileCachedAt(
          "choice:" + guided.value->dump(), [&] { return CompileChoice(choices); }, guided.field);
    }
    case GuidedKind::kRegex: {
      if (!guided.value->is_string()) {
        FailField(ErrorCode::kInvalidArgument, guided.field,
                  "expected a string (a regular expression), got ", JsonKind(*guided.value));
      }
      const std::string pattern = guided.value->get<std::string>();
      return CompileCachedAt(
          "regex:" + pattern, [&] { return CompileRegex(pattern); }, guided.field);
    }
    case GuidedKind::kGrammar:
      break;
  }
  if (!guided.value->is_string()) {
    FailField(ErrorCode::kInvalidArgument, guided.field, "expected a string (a GBNF grammar), got ",
              JsonKind(*guided.value));
  }
  const std::string gbnf = guided.value->get<std::string>();
  return CompileCachedAt(
      "gbnf:" + gbnf, [&] { return CompileGbnf(gbnf, ""); }, guided.field);
}

// vLLM's prompt_logprobs; the engine computes the most any part of the request asks for.
void ParsePromptLogprobs(const RequestObject& body, GenerationRequest* g) {
  const ParamRange& range = request_ranges::kPromptLogprobs;
  const nlohmann::json* value = body.Find(range.name);
  if (value == nullptr || value->is_null()) return;
  const std::optional<int64_t> n =
      body.Int(range.name, static_cast<int64_t>(range.min), static_cast<int64_t>(range.max));
  if (body.Bool("stream").value_or(false)) {
    FailField(ErrorCode::kInvalidArgument, range.name,
              "is not available with stream true (as in vLLM): ask without streaming");
  }
  g->prompt_logprobs = std::max(g->prompt_logprobs, static_cast<int>(*n));
}

}  // namespace

std::string_view SamplerStepName(SamplerStep step) {
  for (const SamplerName& s : kSamplerNames) {
    if (s.step == step) return s.name;
  }
  return "";
}

void ParseOtherServersGenerationFields(const RequestObject& body, GenerationRequest* g) {
  ParseNPredict(body, g);
  ParseLlamaServerSampling(body, &g->sampling);
  ParseStopTokenIds(body, g);
  const ParamRange& min_tokens = request_ranges::kMinTokens;
  if (const std::optional<int64_t> n =
          body.Int(min_tokens.name, static_cast<int64_t>(min_tokens.min),
                   static_cast<int64_t>(min_tokens.max))) {
    g->min_tokens = static_cast<int>(*n);
  }
  const ParamRange& budget = request_ranges::kThinkingTokenBudget;
  if (const std::optional<int64_t> n = body.Int(budget.name, static_cast<int64_t>(budget.min),
                                                static_cast<int64_t>(budget.max))) {
    g->reasoning_budget = static_cast<int>(*n);
  }
  g->include_stop_str = body.Bool("include_stop_str_in_output").value_or(false);
  RefuseUnlessNeutral(body, "use_beam_search", false, "qvl samples; it has no beam search");
  ParseTokenBans(body, g);
  RefuseUnlessNeutral(body, "truncate_prompt_tokens", nullptr,
                      "a prompt is never cut; one over the context is refused");
  ParsePromptLogprobs(body, g);
}

void ParseGuidedFields(const RequestObject& body, std::string_view text, GenerationRequest* g) {
  const std::optional<Guided> guided = FindGuided(body);
  if (!guided) return;
  if (g->grammar != nullptr) {
    FailField(ErrorCode::kInvalidArgument, guided->key,
              "cannot be combined with response_format or a forced tool call");
  }
  g->grammar = CompileGuided(*guided, text);
}

void ParseOtherServersChatFields(const RequestObject& body, std::string_view text,
                                 const ChatRequestPolicy& policy, GenerationRequest* g) {
  ParseGuidedFields(body, text, g);
  if (body.Bool("continue_final_message").value_or(false)) {
    // vLLM refuses the two together; add_generation_prompt left out means false here.
    if (body.Bool("add_generation_prompt").value_or(false)) {
      FailField(ErrorCode::kInvalidArgument, "continue_final_message",
                "cannot be combined with add_generation_prompt true (the final message is "
                "continued, no new turn is opened); leave add_generation_prompt out or set it "
                "to false");
    }
    g->continue_final_message = true;
    g->add_generation_prompt = false;
  } else {
    RefuseUnlessNeutral(body, "add_generation_prompt", true,
                        "the assistant's turn is opened unless continue_final_message is true");
  }
  RefuseUnlessNeutral(body, "echo", false, "the prompt is not returned");
  CheckTemplateFields(body, policy.chat_template);
}

void CheckTemplateFields(const RequestObject& body, ChatTemplateKind chat_template) {
  if (!body.String("chat_template").value_or("").empty()) {
    FailField(ErrorCode::kInvalidArgument, "chat_template",
              "is not supported: qvl renders the model's own chat template");
  }
  if (const nlohmann::json* kwargs = body.Find("chat_template_kwargs")) {
    const RequestObject object(*kwargs, "chat_template_kwargs");
    const bool thinking = chat_template == ChatTemplateKind::kThinking;
    if (const std::optional<bool> enable = object.Bool("enable_thinking");
        enable && *enable != thinking) {
      FailField(ErrorCode::kInvalidArgument, object.Field("enable_thinking"),
                thinking ? "this model always thinks (a Qwen3-VL Thinking model: its chat "
                           "template opens the reasoning, which comes in reasoning_content)"
                         : "this model does not think (a Qwen3-VL Instruct model)");
    }
  }
}

void CheckContinuedMessages(const GenerationRequest& g, ChatTemplateKind chat_template,
                            const ContinuationFields& fields) {
  if (!g.continue_final_message) return;
  if (g.grammar != nullptr) {
    FailField(ErrorCode::kInvalidArgument, fields.grammar,
              "a grammar (response_format, Ollama's format, guided decoding or a forced tool "
              "call) cannot bind an answer that continues the final assistant message: it "
              "would bind the continuation alone, not the message it continues");
  }
  try {
    RenderContinuedChat(g.messages, g.tools_json, chat_template);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kInvalidArgument) throw;
    throw FieldError(e.code(), std::string(fields.messages), e.what());
  }
}

}  // namespace qvl
