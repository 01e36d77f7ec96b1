#include "server/ollama_route.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>

#include "engine/request_preparer.h"
#include "engine/sampler.h"
#include "model/dtype_words.h"
#include "model/qwen3vl.h"
#include "server/http_reply.h"
#include "server/inline_media.h"
#include "server/ollama_encoder.h"
#include "server/ollama_request.h"
#include "server/openai_format.h"
#include "text/chat_template.h"

namespace qvl {
namespace {

// The Ollama version whose API these routes follow (structured outputs, tool calls
// while streaming, `think`): clients that check the server's version see one they know.
constexpr char kOllamaApiVersion[] = "0.11.0";

using Parser = OllamaRequest (*)(std::string_view, const ChatRequestPolicy&);

void HandleOllama(const GenerationRouteContext& context, const httplib::Request& req,
                  httplib::Response& res, const httplib::ContentReader& reader, OllamaApi api,
                  Parser parse) {
  std::string body;
  double upload_ms = 0;
  Engine* engine = AcceptGenerationRequest(context, req, res, reader, &body, &upload_ms);
  if (engine == nullptr) return;
  OllamaRequest request;
  try {
    // As on chat completions (chat_route.cc): images go straight from the body to bytes.
    InlineMedia media = TakeInlineMedia(
        &body, api == OllamaApi::kChat ? MediaLayout::kOllamaChat : MediaLayout::kOllamaGenerate);
    ChatRequestPolicy policy = PolicyForEngine(context.policy, *engine);
    policy.media.inline_media = &media;
    request = parse(body, policy);
  } catch (const std::exception& e) {
    ReplyError(res, ApiErrorFrom(e), context.errors);
    return;
  }
  OllamaEncoderOptions options;
  options.api = api;
  options.model = request.model;
  options.stream = request.stream;
  options.parse_tool_calls = request.parse_tool_calls;
  options.split_reasoning = SplitsReasoning(*engine, request.generation);
  options.logprobs = request.generation.top_logprobs >= 0;
  auto encoder = std::make_unique<OllamaEncoder>(std::move(options));
  if (request.load_only) {
    res.set_content(encoder->LoadReply(), std::string(encoder->ContentType(request.stream)));
    return;
  }
  const std::optional<std::string> answer_key =
      TakeAnswerKey(context, &body, request.generation, *engine);
  RespondWithGeneration(context, engine, std::move(request.generation), std::move(encoder),
                        request.stream, upload_ms, res, answer_key);
}

int64_t WeightBytes(const Engine& engine) {
  int64_t bytes = 0;
  std::error_code error;
  for (const std::string& file : engine.model().folder().weight_files) {
    const auto size = std::filesystem::file_size(file, error);
    if (!error) bytes += static_cast<int64_t>(size);
  }
  return bytes;
}

nlohmann::json DetailsJson(const Engine& engine) {
  std::string level = DtypeName(engine.model().options().text_weights);
  for (char& c : level) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return {{"parent_model", ""},
          {"format", "safetensors"},
          {"family", "qwen3vl"},
          {"families", {"qwen3vl"}},
          {"quantization_level", level}};
}

// The model's default sampling as Ollama's Modelfile parameters ("temperature 0.7").
std::string ParametersText(const Engine& engine) {
  const SamplerConfig s = ResolveSampling({}, engine.model().folder().generation, 0);
  std::string out;
  char line[64];
  if (!s.greedy) {
    std::snprintf(line, sizeof(line), "temperature %g\n", s.temperature);
    out += line;
  }
  std::snprintf(line, sizeof(line), "top_p %g\ntop_k %d\n", s.top_p, s.top_k);
  out += line;
  if (s.repetition_penalty != 1) {
    std::snprintf(line, sizeof(line), "repeat_penalty %g\n", s.repetition_penalty);
    out += line;
  }
  return out;
}

// What Ollama's clients read to offer a feature; a Thinking model's reasoning comes as
// `thinking`, so they show it apart.
nlohmann::json Capabilities(const Engine& engine) {
  nlohmann::json capabilities = {"completion", "vision", "tools"};
  if (engine.preparer().chat_template() == ChatTemplateKind::kThinking) {
    capabilities.push_back("thinking");
  }
  return capabilities;
}

}  // namespace

void HandleOllamaChat(const GenerationRouteContext& context, const httplib::Request& req,
                      httplib::Response& res, const httplib::ContentReader& reader) {
  HandleOllama(context, req, res, reader, OllamaApi::kChat, &ParseOllamaChat);
}

void HandleOllamaGenerate(const GenerationRouteContext& context, const httplib::Request& req,
                          httplib::Response& res, const httplib::ContentReader& reader) {
  HandleOllama(context, req, res, reader, OllamaApi::kGenerate, &ParseOllamaGenerate);
}

nlohmann::json OllamaModelsJson(const std::vector<std::string>& names, const Engine& engine,
                                int64_t started_at, bool running) {
  nlohmann::json models = nlohmann::json::array();
  const int64_t bytes = WeightBytes(engine);
  for (const std::string& name : names) {
    nlohmann::json model = {{"name", name},
                            {"model", name},
                            {"size", bytes},
                            {"digest", ""},
                            {"details", DetailsJson(engine)}};
    if (running) {
      // Loaded for as long as the server runs, all of it in main memory.
      model["expires_at"] = "9999-12-31T23:59:59Z";
      model["size_vram"] = 0;
    } else {
      model["modified_at"] = Rfc3339(started_at);
    }
    models.push_back(std::move(model));
  }
  return {{"models", std::move(models)}};
}

nlohmann::json OllamaShowJson(const std::string& name, const Engine& engine, int64_t started_at) {
  const ModelConfig& c = engine.model().config();
  return {
      {"modelfile", ""},
      {"parameters", ParametersText(engine)},
      {"template", FindChatTemplate(engine.model().folder().dir).text},
      {"details", DetailsJson(engine)},
      {"model_info",
       {{"general.architecture", "qwen3vl"},
        {"general.basename", name},
        {"qwen3vl.context_length", engine.options().context_tokens},
        {"qwen3vl.embedding_length", c.text.hidden_size},
        {"qwen3vl.block_count", c.text.num_layers},
        {"qwen3vl.attention.head_count", c.text.num_heads},
        {"qwen3vl.attention.head_count_kv", c.text.num_kv_heads},
        {"qwen3vl.vision.block_count", c.vision.depth}}},
      {"capabilities", Capabilities(engine)},
      {"modified_at", Rfc3339(started_at)},
  };
}

nlohmann::json OllamaVersionJson() { return {{"version", kOllamaApiVersion}}; }

}  // namespace qvl
