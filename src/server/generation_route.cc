#include "server/generation_route.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "base/timer.h"
#include "model/qwen3vl.h"
#include "server/access_log.h"
#include "server/answer_cache.h"
#include "server/byte_size.h"
#include "server/engine_limits.h"
#include "server/http_reply.h"
#include "server/request_id.h"
#include "server/update_channel.h"

namespace qvl {
namespace {

// How often an idle response checks that its client is still there.
constexpr std::chrono::milliseconds kClientCheckInterval{100};

// One response in flight: lives as long as httplib keeps the content provider, which is
// until the response is written or abandoned.
struct ResponseState {
  ResponseState(Engine* e, std::vector<RequestId> i, std::shared_ptr<UpdateChannel> c,
                std::unique_ptr<ResponseEncoder> enc, ServerMetrics* m, std::atomic<int>* counter)
      : engine(e),
        ids(std::move(i)),
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
  std::vector<RequestId> ids;  // what the engine works on for this response
  std::shared_ptr<UpdateChannel> channel;
  std::unique_ptr<ResponseEncoder> encoder;
  ServerMetrics* metrics;
  std::atomic<int>* in_flight;
  bool started = false;
  bool final_seen = false;
  std::vector<GenerationUpdate> updates;
};

// False, after noting it for the access line: the client is gone.
bool ClientGone() {
  RecordClientGone();
  return false;
}

bool Provide(ResponseState& state, httplib::DataSink& sink) {
  if (!state.started) {
    state.started = true;
    const std::string start = state.encoder->Start();
    if (!start.empty() && !sink.write(start.data(), start.size())) return ClientGone();
  }
  state.updates.clear();
  if (!state.channel->Take(kClientCheckInterval, &state.updates)) {
    return sink.is_writable() || ClientGone();
  }
  std::string out;
  for (GenerationUpdate& update : state.updates) {
    out += state.encoder->Encode(std::move(update));
    if (state.encoder->finished() && !state.final_seen) {
      state.final_seen = true;
      state.metrics->ObserveGeneration(state.encoder->summary());
      RecordGeneration(state.encoder->summary());
    }
  }
  if (out.empty()) {
    // A whole answer writes nothing until it is done: without this check it would run to
    // its end after its client hung up.
    if (!sink.is_writable()) return ClientGone();
  } else if (!sink.write(out.data(), out.size())) {
    return ClientGone();
  }
  if (state.encoder->finished()) sink.done();
  return true;
}

}  // namespace

bool ReadBody(const httplib::ContentReader& reader, size_t max_bytes, httplib::Response& res,
              std::string* body, ErrorShape errors) {
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
    ReplyError(
        res,
        MakeApiError(ErrorCode::kTooLarge, StrCat("the request body is over the limit of ",
                                                  FormatByteSize(static_cast<int64_t>(max_bytes)),
                                                  " (the operator sets it with --max-body-mb)")),
        errors);
    return false;
  }
  if (!ok) {
    ReplyError(res, MakeApiError(ErrorCode::kInvalidArgument, "could not read the request body"),
               errors);
    return false;
  }
  return true;
}

Engine* AcceptGenerationRequest(const GenerationRouteContext& context, const httplib::Request& req,
                                httplib::Response& res, const httplib::ContentReader& reader,
                                std::string* body, double* upload_ms) {
  // Before the body: a client without the key must not make the server buffer it.
  if (!context.authorized(req)) {
    ReplyUnauthorized(res, context.errors);
    return nullptr;
  }
  // One buffer for the whole body: grown by doubling instead, a 77 MB body briefly held
  // its 64 MB buffer and the 128 MB one it moved to. A chunked body declares no length.
  const auto declared = req.get_header_value<uint64_t>("Content-Length");
  if (declared <= context.max_body_bytes) body->reserve(declared);
  const Stopwatch upload;
  if (!ReadBody(reader, context.max_body_bytes, res, body, context.errors)) return nullptr;
  *upload_ms = upload.Millis();
  Engine* engine = context.engine->load();
  if (context.shutting_down->load()) {
    ReplyError(res, MakeApiError(ErrorCode::kUnavailable, "the server is shutting down"),
               context.errors);
    return nullptr;
  }
  if (engine == nullptr) {
    ReplyError(
        res,
        MakeApiError(ErrorCode::kUnavailable, "the model is still loading; retry in a few seconds"),
        context.errors);
    return nullptr;
  }
  return engine;
}

ChatRequestPolicy PolicyForEngine(const ChatRequestPolicy& base, const Engine& engine) {
  ChatRequestPolicy policy = base;
  TakeEngineLimits(engine, &policy);
  return policy;
}

std::string ResponseModelName(const GenerationRouteContext& context, const std::string& asked) {
  if (!asked.empty()) return asked;
  return !context.policy.model_names.empty() ? context.policy.model_names.front() : "qvl";
}

std::optional<std::string> TakeAnswerKey(const GenerationRouteContext& context, std::string* body,
                                         const GenerationRequest& request, const Engine& engine,
                                         std::string_view route) {
  std::optional<std::string> key =
      context.shared_cache ? AnswerKey(*context.shared_cache, *body, request, engine, route)
                           : std::nullopt;
  std::string().swap(*body);
  return key;
}

namespace {

// Answers from the updates of `ids`, which `channel` receives, through `encoder`;
// cancels them all if the client goes away first.
void RespondFromChannel(const GenerationRouteContext& context, Engine* engine,
                        std::vector<RequestId> ids, std::shared_ptr<UpdateChannel> channel,
                        std::unique_ptr<ResponseEncoder> encoder, bool stream,
                        httplib::Response& res) {
  auto state =
      std::make_shared<ResponseState>(engine, std::move(ids), std::move(channel),
                                      std::move(encoder), context.metrics, context.in_flight);
  if (stream) {
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
  }
  const std::string content_type(state->encoder->ContentType(stream));
  res.set_chunked_content_provider(
      content_type, [state](size_t, httplib::DataSink& sink) { return Provide(*state, sink); },
      [state](bool) {
        if (state->final_seen) return;
        for (const RequestId id : state->ids) state->engine->Cancel(id);
      });
}

}  // namespace

void RespondWithGeneration(const GenerationRouteContext& context, Engine* engine,
                           GenerationRequest request, std::unique_ptr<ResponseEncoder> encoder,
                           bool stream, double upload_ms, httplib::Response& res,
                           const std::optional<std::string>& answer_key) {
  encoder->set_upload_ms(upload_ms);
  request.request_id = res.get_header_value(kRequestIdHeader);
  auto channel = std::make_shared<UpdateChannel>();
  std::vector<RequestId> ids;
  SharedCache* shared = context.shared_cache;
  const bool replayed = shared && answer_key && ReplayAnswer(*shared, *answer_key, *channel);
  if (replayed) res.set_header("X-Qvl-Answer-Cache", "shared");
  try {
    if (!replayed) {
      ids.push_back(
          engine->Submit(std::move(request),
                         RecordAnswer(shared, answer_key, [channel](GenerationUpdate&& update) {
                           channel->Push(std::move(update));
                         })));
    }
  } catch (const std::exception& e) {
    ReplyError(res, ApiErrorFrom(e), context.errors);
    return;
  }
  RespondFromChannel(context, engine, std::move(ids), std::move(channel), std::move(encoder),
                     stream, res);
}

void RespondWithGenerations(const GenerationRouteContext& context, Engine* engine,
                            std::vector<GenerationRequest> requests,
                            std::unique_ptr<ResponseEncoder> encoder, bool stream, double upload_ms,
                            httplib::Response& res) {
  encoder->set_upload_ms(upload_ms);
  auto channel = std::make_shared<UpdateChannel>();
  std::vector<UpdateSink> sinks;
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].request_id = res.get_header_value(kRequestIdHeader);
    const int first = static_cast<int>(i) * requests[i].n;
    sinks.push_back([channel, first](GenerationUpdate&& update) {
      update.choice += first;
      channel->Push(std::move(update));
    });
  }
  std::vector<RequestId> ids;
  try {
    ids = engine->SubmitAll(std::move(requests), std::move(sinks));
  } catch (const std::exception& e) {
    ReplyError(res, ApiErrorFrom(e), context.errors);
    return;
  }
  RespondFromChannel(context, engine, std::move(ids), std::move(channel), std::move(encoder),
                     stream, res);
}

void RespondWithPrompts(const GenerationRouteContext& context, Engine* engine,
                        std::vector<GenerationRequest> prompts,
                        std::unique_ptr<ResponseEncoder> encoder, bool stream, double upload_ms,
                        std::string* body, std::string_view route, httplib::Response& res) {
  if (prompts.size() > 1) {
    std::string().swap(*body);
    RespondWithGenerations(context, engine, std::move(prompts), std::move(encoder), stream,
                           upload_ms, res);
    return;
  }
  const std::optional<std::string> answer_key =
      TakeAnswerKey(context, body, prompts.front(), *engine, route);
  RespondWithGeneration(context, engine, std::move(prompts.front()), std::move(encoder), stream,
                        upload_ms, res, answer_key);
}

}  // namespace qvl
