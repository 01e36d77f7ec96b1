// The base64 data URLs (and the bare base64 images of Ollama and Anthropic) of a
// request's media, decoded straight from the request body before the body is parsed as
// JSON, on every route that takes media. Parsed the ordinary way, a data URL is held
// three times beside its decoded bytes (the body, the JSON lexer's token buffer and the
// string in the parsed document), and the lexer reads it a byte at a time: a 58 MB video
// as a 77 MB body took 330 MB of peak memory over the idle server. Here each payload is
// decoded once, from the body, and cut out of it; the parsed request then holds
// `"data:TYPE;base64,"` (or `""` for a bare image) at that field and the image loader
// takes the bytes from here (image_source.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qvl {

// Which route's body is read: each API carries media in its own fields.
enum class MediaLayout {
  // /v1/chat/completions: messages[i].content[j] .image_url.url, .image_url, .image,
  // .video_url.url, .video and .video[k].
  kChatCompletions,
  // /v1/responses: input[i].content[j].image_url and input[i].output[j].image_url (a
  // function call's output).
  kResponses,
  // Ollama's /api/chat: messages[i].images[j], bare base64 or data URLs.
  kOllamaChat,
  // Ollama's /api/generate: images[j], bare base64 or data URLs.
  kOllamaGenerate,
  // Anthropic's /v1/messages and /v1/messages/count_tokens:
  // messages[i].content[j].source.data and a tool result's
  // messages[i].content[j].content[k].source.data, bare base64 only (the media type is
  // the source's media_type).
  kAnthropicMessages,
};

class InlineMedia {
 public:
  // The bytes decoded for the data URL at `field` ("messages[0].content[1].video_url.url"),
  // handed out once; nullopt when there are none.
  std::optional<std::vector<uint8_t>> Take(std::string_view field);

 private:
  friend InlineMedia TakeInlineMedia(std::string* body, MediaLayout layout);
  // By field; a field written twice in one object keeps its last value, as the parsed
  // JSON does.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> decoded_;
};

// Decodes the base64 payloads of the data URLs `body` (the JSON text of a request of
// `layout`'s route) holds in its media fields and removes them from `body`, which is
// shrunk to what is left; a bare base64 image (Ollama's, Anthropic's) is removed whole,
// leaving "".
// A payload that is not plain, valid base64 (a JSON escape in it, a bad character or
// length) stays in the body for the request parser, whose error names its field; so does
// everything in a body whose brackets or strings do not close. Limits are the request parser's to
// check, on the decoded size. A syntax error the JSON parser finds later in the body counts its
// columns without the removed payloads.
InlineMedia TakeInlineMedia(std::string* body, MediaLayout layout);

}  // namespace qvl
