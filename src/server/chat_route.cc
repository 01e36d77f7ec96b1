#include "server/chat_route.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <vector>

#include "model/qwen3vl.h"
#include "server/answer_cache.h"
#include "server/byte_size.h"
#include "server/completion_encoder.h"
#include "server/http_reply.h"
#include "server/update_channel.h"

namespace qvl {
namespace {

// How often an idle response checks that its client is still there.
constexpr std::chrono::milliseconds kClientCheckInterval{100};

// One response in flight: lives as long as httplib keeps the content provider, which is
// until the response is written or abandoned.
struct ResponseState {
  ResponseState(Engine* e, RequestId i, std::shared_ptr<UpdateChannel> c, CompletionEncoder enc,
                ServerMetrics* m, std::atomic<int>* counter)
      : engine(e),
        id(i),
        channel(std::move(c)),
        encoder(std::move(enc)),
        metrics(m),
        in_flight(counter) {
    ++*in_flight;
  }
  ~ResponseState() { --*in_flight; }
  ResponseState(const ResponseState&) = delete;
  ResponseState& operator=(const ResponseState&) = delete;

  Engine* engine;
  RequestId id;
  std::shared_ptr<UpdateChannel> channel;
  CompletionEncoder encoder;
  ServerMetrics* metrics;
  std::atomic<int>* in_flight;
  bool started = false;
  bool final_seen = false;
  std::vector<GenerationUpdate> updates;
};

// Engine errors name an image as "image 2 (messages[1].content[0])": that path is the
// param OpenAI clients expect.
ApiError ErrorWithImageParam(const std::exception& e) {
  ApiError error = ApiErrorFrom(e);
  if (!error.param.empty()) return error;
  const size_t start = error.message.find("(messages[");
  if (start == std::string::npos) return error;
  const size_t end = error.message.find(')', start);
  if (end != std::string::npos) error.param = error.message.substr(start + 1, end - start - 1);
  return error;
}

bool Provide(ResponseState& state, httplib::DataSink& sink) {
  if (!state.started) {
    state.started = true;
    const std::string start = state.encoder.Start();
    if (!start.empty() && !sink.write(start.data(), start.size())) return false;
  }
  state.updates.clear();
  if (!state.channel->Take(kClientCheckInterval, &state.updates)) return sink.is_writable();
  std::string out;
  for (GenerationUpdate& update : state.updates) {
    if (update.finished) {
      state.final_seen = true;
      state.metrics->ObserveGeneration(update);
    }
    out += state.encoder.Encode(std::move(update));
  }
  if (!out.empty() && !sink.write(out.data(), out.size())) return false;
  if (state.encoder.finished()) sink.done();
  return true;
}

}  // namespace

bool ReadBody(const httplib::ContentReader& reader, size_t max_bytes, httplib::Response& res,
              std::string* body) {
  bool too_large = false;
  const bool ok = reader([&](const char* data, size_t length) {
    if (body->size() + length > max_bytes) {
      too_large = true;
      return false;
    }
    body->append(data, length);
    return true;
  });
  if (too_large || res.status == 413) {
    ReplyError(res, MakeApiError(ErrorCode::kTooLarge,
                                 StrCat("the request body is over the limit of ",
                                        FormatByteSize(static_cast<int64_t>(max_bytes)),
                                        " (the operator sets it with --max-body-mb)")));
    return false;
  }
  if (!ok) {
    ReplyError(res, MakeApiError(ErrorCode::kInvalidArgument, "could not read the request body"));
    return false;
  }
  return true;
}

void HandleChatCompletion(const ChatRouteContext& context, const httplib::Request& req,
                          httplib::Response& res, const httplib::ContentReader& reader) {
  // Before the body: a client without the key must not make the server buffer it.
  if (!context.authorized(req)) {
    ReplyError(res, MakeApiError(ErrorCode::kUnauthenticated,
                                 "missing or wrong API key; send \"Authorization: Bearer <key>\""));
    return;
  }
  std::string body;
  if (!ReadBody(reader, context.max_body_bytes, res, &body)) return;
  Engine* engine = context.engine->load();
  if (context.shutting_down->load()) {
    ReplyError(res, MakeApiError(ErrorCode::kUnavailable, "the server is shutting down"));
    return;
  }
  if (engine == nullptr) {
    ReplyError(res, MakeApiError(ErrorCode::kUnavailable,
                                 "the model is still loading; retry in a few seconds"));
    return;
  }
  ChatRequestPolicy policy = context.policy;
  const VisionConfig& vision = engine->model().config().vision;
  const int64_t factor = int64_t{vision.patch_size} * vision.spatial_merge_size;
  policy.pixels_per_image_token = factor * factor;
  policy.max_completion_tokens =
      static_cast<int>(std::min<int64_t>(engine->options().context_tokens, 1 << 30));

  ChatRequest request;
  try {
    request = ParseChatRequest(body, policy);
  } catch (const std::exception& e) {
    ReplyError(res, ApiErrorFrom(e));
    return;
  }
  SharedCache* shared = context.shared_cache;
  const auto answer_key =
      shared ? AnswerKey(*shared, body, request.generation, *engine) : std::nullopt;
  std::string().swap(body);

  auto channel = std::make_shared<UpdateChannel>();
  RequestId id = 0;
  const bool replayed = answer_key && ReplayAnswer(*shared, *answer_key, *channel);
  if (replayed) res.set_header("X-Qvl-Answer-Cache", "shared");
  try {
    if (!replayed) {
      id = engine->Submit(std::move(request.generation),
                          RecordAnswer(shared, answer_key, [channel](GenerationUpdate&& update) {
                            channel->Push(std::move(update));
                          }));
    }
  } catch (const std::exception& e) {
    ReplyError(res, ErrorWithImageParam(e));
    return;
  }
  CompletionIdentity identity;
  identity.id = NewCompletionId();
  identity.created = static_cast<int64_t>(std::time(nullptr));
  identity.model = !request.model.empty()                ? request.model
                   : !context.policy.model_names.empty() ? context.policy.model_names.front()
                                                         : "qvl";
  EncoderOptions options;
  options.stream = request.stream;
  options.include_usage = request.include_usage;
  options.logprobs = request.logprobs;
  auto state = std::make_shared<ResponseState>(engine, id, channel,
                                               CompletionEncoder(std::move(identity), options),
                                               context.metrics, context.in_flight);
  if (request.stream) {
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
  }
  res.set_chunked_content_provider(
      request.stream ? "text/event-stream" : "application/json",
      [state](size_t, httplib::DataSink& sink) { return Provide(*state, sink); },
      [state](bool) {
        if (!state->final_seen) state->engine->Cancel(state->id);
      });
}

}  // namespace qvl
