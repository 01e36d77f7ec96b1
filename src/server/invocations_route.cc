#include "server/invocations_route.h"

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "server/chat_route.h"
#include "server/completions_route.h"
#include "server/embeddings_route.h"
#include "server/http_reply.h"

namespace qvl {
namespace {

// Notes which of the keys that choose a route the body's top-level object has, without
// building the document (an image request's body may be tens of megabytes). Stops at
// `messages`, which decides.
class TopLevelKeys final : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool messages = false, prompt = false, input = false;
  bool malformed = false;  // not JSON

  bool key(string_t& name) override {
    if (depth_ != 1) return true;
    messages = messages || name == "messages";
    prompt = prompt || name == "prompt";
    input = input || name == "input";
    return !messages;
  }
  bool start_object(std::size_t) override { return Enter(); }
  bool start_array(std::size_t) override { return Enter(); }
  bool end_object() override { return Leave(); }
  bool end_array() override { return Leave(); }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    malformed = true;
    return false;
  }

 private:
  bool Enter() {
    ++depth_;
    return true;
  }
  bool Leave() {
    --depth_;
    return true;
  }
  int depth_ = 0;
};

// The route for an invocation body by its top-level keys; a body that is not JSON goes to
// the chat route, which names the syntax error. Null for an object with none of the keys.
BodyRoute RouteFor(std::string_view body) {
  TopLevelKeys keys;
  nlohmann::json::sax_parse(body, &keys);
  if (keys.messages || keys.malformed) return HandleChatCompletion;
  if (keys.prompt) return HandleTextCompletion;
  if (keys.input) return HandleEmbeddings;
  return nullptr;
}

}  // namespace

void HandleInvocation(const GenerationRouteContext& context, const httplib::Request& req,
                      httplib::Response& res, const httplib::ContentReader& reader) {
  // Before the body, as every generation route: a client without the key must not make
  // the server buffer it.
  if (!context.authorized(req)) return ReplyUnauthorized(res, context.errors);
  std::string body;
  if (!ReadBody(reader, context.max_body_bytes, res, &body, context.errors)) return;
  const BodyRoute route = RouteFor(body);
  if (route == nullptr) {
    return ReplyError(res,
                      MakeApiError(ErrorCode::kInvalidArgument,
                                   "an invocation is a chat completion (with messages), a text "
                                   "completion (with prompt) or an embeddings request (with input)",
                                   "messages"));
  }
  // The route reads the body again, from this copy, which it frees once the route holds its
  // own.
  const httplib::ContentReader again(
      [&body](const httplib::ContentReceiver& receiver) {
        const bool read = receiver(body.data(), body.size());
        std::string().swap(body);
        return read;
      },
      [](const httplib::MultipartContentHeader&, const httplib::ContentReceiver&) {
        return false;
      });
  route(context, req, res, again);
}

}  // namespace qvl
