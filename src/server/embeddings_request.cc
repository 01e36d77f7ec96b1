#include "server/embeddings_request.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "base/field_error.h"
#include "server/chat_messages.h"
#include "server/completion_request.h"
#include "server/generation_fields.h"
#include "server/media_fields.h"
#include "server/ollama_request.h"
#include "server/request_fields.h"
#include "server/server_dialects.h"

namespace qvl {
namespace {

// Fields of the generating routes (chat, completions, their vLLM and llama-server
// extensions) that would change a generated answer. Sent here they mean the client
// expects an answer, or a setting, that an embedding does not have.
constexpr const char* kGenerationFields[] = {"max_tokens",
                                             "max_completion_tokens",
                                             "n_predict",
                                             "temperature",
                                             "top_p",
                                             "top_k",
                                             "min_p",
                                             "presence_penalty",
                                             "frequency_penalty",
                                             "repetition_penalty",
                                             "seed",
                                             "stop",
                                             "stop_token_ids",
                                             "min_tokens",
                                             "ignore_eos",
                                             "include_stop_str_in_output",
                                             "allowed_token_ids",
                                             "bad_words",
                                             "n",
                                             "best_of",
                                             "stream",
                                             "stream_options",
                                             "logprobs",
                                             "top_logprobs",
                                             "logit_bias",
                                             "response_format",
                                             "tools",
                                             "tool_choice",
                                             "parallel_tool_calls",
                                             "reasoning_effort",
                                             "prediction",
                                             "echo",
                                             "suffix",
                                             "guided_json",
                                             "guided_regex",
                                             "guided_choice",
                                             "guided_grammar",
                                             "structured_outputs",
                                             "json_schema",
                                             "grammar",
                                             "audio",
                                             "modalities"};

// What clients that fill in every field send for "not asked": false, an empty list or
// object, one answer.
bool Neutral(std::string_view key, const nlohmann::json& value) {
  if (value.is_boolean()) return !value.get<bool>();
  if (value.is_array() || value.is_object()) return value.empty();
  return (key == "n" || key == "best_of") && value.is_number() && value == 1;
}

void RefuseGenerationFields(const RequestObject& body) {
  for (const char* key : kGenerationFields) {
    const nlohmann::json* value = body.Find(key);
    if (value != nullptr && !Neutral(key, *value)) {
      FailField(ErrorCode::kInvalidArgument, key,
                "is not an embeddings field: an embedding is read off the prompt and nothing "
                "is generated");
    }
  }
}

// An embed request whose prompt errors name `field`.
GenerationRequest EmbedInput(std::string field) {
  GenerationRequest g;
  g.embed = true;
  g.messages_field = std::move(field);
  return g;
}

// A string input at `field`, tokenized as it is.
GenerationRequest TextInput(const nlohmann::json& value, const std::string& field) {
  if (!value.is_string()) {
    FailField(ErrorCode::kInvalidArgument, field, "expected a string, got ", JsonKind(value));
  }
  std::string text = value.get<std::string>();
  if (text.empty()) FailField(ErrorCode::kInvalidArgument, field, "must not be empty");
  GenerationRequest g = EmbedInput(field);
  g.prompt_text = std::move(text);
  return g;
}

// Checks the number of inputs an array at "input" lists.
void CheckInputCount(const nlohmann::json& input) {
  if (input.empty()) FailField(ErrorCode::kInvalidArgument, "input", "must not be empty");
  if (input.size() > static_cast<size_t>(kMaxEmbeddingInputs)) {
    FailField(ErrorCode::kInvalidArgument, "input", "at most ", kMaxEmbeddingInputs,
              " inputs per request, got ", input.size());
  }
}

// OpenAI's "input": a string, token ids, or an array of strings and token id lists.
std::vector<GenerationRequest> ParseOpenAIInputs(const nlohmann::json& input) {
  std::vector<GenerationRequest> out;
  if (input.is_string()) {
    out.push_back(TextInput(input, "input"));
    return out;
  }
  if (!input.is_array()) {
    FailField(ErrorCode::kInvalidArgument, "input",
              "expected a string, an array of strings or token ids, got ", JsonKind(input));
  }
  if (!input.empty() && input.front().is_number()) {
    out.push_back(EmbedInput("input"));
    out.back().prompt_tokens = ParseTokenIds(input, "input");
    return out;
  }
  CheckInputCount(input);
  for (size_t i = 0; i < input.size(); ++i) {
    const std::string field = IndexField("input", i);
    const nlohmann::json& item = input[i];
    if (item.is_array()) {
      out.push_back(EmbedInput(field));
      out.back().prompt_tokens = ParseTokenIds(item, field);
    } else if (item.is_string()) {
      out.push_back(TextInput(item, field));
    } else {
      FailField(ErrorCode::kInvalidArgument, field, "expected a string or token ids, got ",
                JsonKind(item));
    }
  }
  return out;
}

// vLLM's chat form: the messages as /v1/chat/completions reads them, one input.
GenerationRequest ParseMessagesInput(const RequestObject& body, const nlohmann::json& messages,
                                     const ChatRequestPolicy& policy) {
  if (body.Bool("continue_final_message").value_or(false)) {
    FailField(ErrorCode::kInvalidArgument, "continue_final_message",
              "is not an embeddings field: the messages are embedded as the chat template "
              "renders them; leave it out or set it to false");
  }
  CheckTemplateFields(body, policy.chat_template);
  GenerationRequest g = EmbedInput("messages");
  g.add_generation_prompt = body.Bool("add_generation_prompt").value_or(false);
  ParseImageBudget(body, policy.pixels_per_image_token, &g.image_budget);
  const VideoInput video_defaults = ParseVideoDefaults(body, policy.pixels_per_video_token);
  ParseChatMessages(messages, MessageLimitsOf(policy), &g.messages, &g.images, &g.videos);
  ApplyVideoDefaults(video_defaults, &g.videos);
  return g;
}

// "dimensions": the first N values of each embedding; 0 when absent (all of them).
int64_t ParseDimensions(const RequestObject& body, int64_t hidden_size) {
  return body.Int("dimensions", 1, hidden_size).value_or(0);
}

// Whether "encoding_format" asks for base64 ("float", the default, does not).
bool ParseBase64Format(const RequestObject& body) {
  const std::string format = body.String("encoding_format").value_or("float");
  if (format != "float" && format != "base64") {
    FailField(ErrorCode::kInvalidArgument, "encoding_format",
              "expected \"float\" or \"base64\", got \"", format, "\"");
  }
  return format == "base64";
}

// What both of Ollama's embedding routes read alike: the model, and options and keep_alive
// checked as /api/chat checks them (sampling changes no embedding, so they go nowhere).
EmbeddingsRequest ParseOllamaCommon(const RequestObject& body, const ChatRequestPolicy& policy) {
  EmbeddingsRequest out;
  out.model = ParseOllamaModel(body, policy.model_names);
  GenerationRequest options;
  ParseOllamaOptions(body, policy.max_stop_strings, &options);
  return out;
}

}  // namespace

EmbeddingsRequest ParseEmbeddingsRequest(std::string_view text, const ChatRequestPolicy& policy,
                                         int64_t hidden_size) {
  const nlohmann::json json = ParseJsonBody(text);
  const RequestObject body(json, "");
  EmbeddingsRequest out;
  out.model = ParseModel(body, policy.model_names);
  RefuseGenerationFields(body);
  body.String("user");  // OpenAI's end-user id: checked, used for nothing
  out.base64 = ParseBase64Format(body);
  out.dimensions = ParseDimensions(body, hidden_size);
  const nlohmann::json* input = body.Find("input");
  const nlohmann::json* messages = body.Find("messages");
  if (input != nullptr && messages != nullptr) {
    FailField(ErrorCode::kInvalidArgument, "messages", "give input or messages, not both");
  }
  if (messages != nullptr) {
    out.inputs.push_back(ParseMessagesInput(body, *messages, policy));
    return out;
  }
  if (input == nullptr) {
    FailField(ErrorCode::kInvalidArgument, "input",
              "is required: the text or token ids to embed (or vLLM's messages)");
  }
  for (const char* key : {"add_generation_prompt", "continue_final_message"}) {
    if (body.Find(key) != nullptr) {
      FailField(ErrorCode::kInvalidArgument, key, "applies to messages only, not to input");
    }
  }
  out.inputs = ParseOpenAIInputs(*input);
  return out;
}

EmbeddingsRequest ParseOllamaEmbedRequest(std::string_view text, const ChatRequestPolicy& policy,
                                          int64_t hidden_size) {
  const nlohmann::json json = ParseJsonBody(text);
  const RequestObject body(json, "");
  EmbeddingsRequest out = ParseOllamaCommon(body, policy);
  body.Bool("truncate");
  out.dimensions = ParseDimensions(body, hidden_size);
  const nlohmann::json* input = body.Find("input");
  if (input == nullptr || (input->is_string() && input->get_ref<const std::string&>().empty()) ||
      (input->is_array() && input->empty())) {
    return out;
  }
  if (input->is_string()) {
    out.inputs.push_back(TextInput(*input, "input"));
    return out;
  }
  if (!input->is_array()) {
    FailField(ErrorCode::kInvalidArgument, "input",
              "expected a string or an array of strings, got ", JsonKind(*input));
  }
  CheckInputCount(*input);
  for (size_t i = 0; i < input->size(); ++i) {
    out.inputs.push_back(TextInput((*input)[i], IndexField("input", i)));
  }
  return out;
}

EmbeddingsRequest ParseOllamaEmbeddingsRequest(std::string_view text,
                                               const ChatRequestPolicy& policy) {
  const nlohmann::json json = ParseJsonBody(text);
  const RequestObject body(json, "");
  EmbeddingsRequest out = ParseOllamaCommon(body, policy);
  // Ollama would ignore it and answer an empty embedding; the client meant /api/embed.
  if (body.Find("input") != nullptr) {
    FailField(ErrorCode::kInvalidArgument, "input",
              "is /api/embed's field: /api/embeddings embeds \"prompt\" (one string)");
  }
  const nlohmann::json* prompt = body.Find("prompt");
  if (prompt == nullptr || (prompt->is_string() && prompt->get_ref<const std::string&>().empty())) {
    return out;
  }
  out.inputs.push_back(TextInput(*prompt, "prompt"));
  return out;
}

}  // namespace qvl
