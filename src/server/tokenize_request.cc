#include "server/tokenize_request.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "base/field_error.h"
#include "server/generation_fields.h"
#include "server/request_fields.h"

namespace qvl {
namespace {

// What to tokenize: llama-server's content, vLLM's prompt or vLLM's messages.
constexpr const char* kInputs[] = {"content", "prompt", "messages"};

// The one of kInputs the body gives.
std::string_view InputOf(const RequestObject& body) {
  std::string_view given;
  for (const char* key : kInputs) {
    if (body.Find(key) == nullptr) continue;
    if (!given.empty()) {
      FailField(ErrorCode::kInvalidArgument, key, "give one of content, prompt and messages; ",
                "this body also gives ", given);
    }
    given = key;
  }
  if (given.empty()) {
    FailField(ErrorCode::kInvalidArgument, "messages",
              "is required: give the text as content (llama-server) or prompt (vLLM), or the "
              "conversation as messages");
  }
  return given;
}

}  // namespace

TokenizeRequest ParseTokenizeRequest(std::string_view text, const ChatRequestPolicy& policy) {
  const nlohmann::json json = ParseJsonBody(text);
  const RequestObject body(json, "");
  TokenizeRequest out;
  out.model = ParseModel(body, policy.model_names);
  // Qwen's tokenizer adds no BOS or EOS token, so these change nothing; still booleans.
  body.Bool("add_special");
  body.Bool("add_special_tokens");
  if (!body.Bool("parse_special").value_or(true)) {
    FailField(ErrorCode::kInvalidArgument, "parse_special",
              "qvl always reads the text of a special token (\"<|im_start|>\") as that token; "
              "leave parse_special out or set it to true");
  }
  out.with_pieces = body.Bool("with_pieces").value_or(false);
  out.token_strs = body.Bool("return_token_strs").value_or(false);
  const std::string_view input = InputOf(body);
  if (input != "messages") {
    for (const char* key : {"add_generation_prompt", "continue_final_message"}) {
      if (body.Find(key) != nullptr) {
        FailField(ErrorCode::kInvalidArgument, key, "applies to messages only, not to ", input);
      }
    }
    out.text = body.RequiredString(input);
    return out;
  }
  const std::optional<bool> add_generation_prompt = body.Bool("add_generation_prompt");
  if (body.Bool("continue_final_message").value_or(false) || !add_generation_prompt) {
    // The chat parser reads both flags as a chat completion does.
    out.chat = ParseChatRequest(text, policy).generation;
    return out;
  }
  // add_generation_prompt alone is /tokenize's own: the chat parser reads the body without
  // it, as a chat completion cannot honour a false one. The rest keeps the body's order
  // (tools are rendered in it).
  nlohmann::ordered_json rest = nlohmann::ordered_json::parse(text);
  rest.erase("add_generation_prompt");
  out.chat = ParseChatRequest(rest.dump(), policy).generation;
  out.chat.add_generation_prompt = *add_generation_prompt;
  return out;
}

DetokenizeRequest ParseDetokenizeRequest(std::string_view text,
                                         const std::vector<std::string>& model_names,
                                         int32_t vocab_size) {
  const nlohmann::json json = ParseJsonBody(text);
  const RequestObject body(json, "");
  DetokenizeRequest out;
  out.model = ParseModel(body, model_names);
  const nlohmann::json* tokens = body.Find("tokens");
  if (tokens == nullptr) FailField(ErrorCode::kInvalidArgument, "tokens", "is required");
  RequireArray(*tokens, "tokens");
  out.tokens.reserve(tokens->size());
  for (size_t i = 0; i < tokens->size(); ++i) {
    const nlohmann::json& id = (*tokens)[i];
    if (!id.is_number_integer()) {
      FailField(ErrorCode::kInvalidArgument, IndexField("tokens", i),
                "expected a token id (an integer), got ", JsonKind(id));
    }
    const bool known = id.is_number_unsigned()
                           ? id.get<uint64_t>() < static_cast<uint64_t>(vocab_size)
                           : id.get<int64_t>() >= 0 && id.get<int64_t>() < vocab_size;
    if (!known) {
      FailField(ErrorCode::kInvalidArgument, IndexField("tokens", i), "token id ", id.dump(),
                " is not in the vocabulary (0 to ", vocab_size - 1, ")");
    }
    out.tokens.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return out;
}

}  // namespace qvl
