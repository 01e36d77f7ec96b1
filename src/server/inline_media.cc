#include "server/inline_media.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <span>

#include "base/field_error.h"
#include "server/base64.h"
#include "server/request_fields.h"

namespace qvl {
namespace {

// How deep a request's media fields are (an Anthropic tool result's image,
// messages[i].content[j].content[k].source.data: eight objects and arrays); the scan
// counts deeper levels without following them, so a body of a million '[' costs it
// nothing.
constexpr size_t kMediaDepth = 8;

// A media field as a path through the JSON: object keys joined by '.', "[]" for an
// array's element. `bare`: the value may also be base64 without a data URL's header;
// `data_url`: it may be a data URL.
struct MediaPath {
  std::string_view path;
  bool bare = false;
  bool data_url = true;
};

// Where each route's request parser reads media (chat_messages.cc, responses_input.cc,
// ollama_request.cc).
constexpr MediaPath kChatPaths[] = {
    {"messages[].content[].image_url.url"}, {"messages[].content[].image_url"},
    {"messages[].content[].image"},         {"messages[].content[].video_url.url"},
    {"messages[].content[].video"},         {"messages[].content[].video[]"},
};
constexpr MediaPath kResponsesPaths[] = {
    {"input[].content[].image_url"},
    {"input[].output[].image_url"},
};
constexpr MediaPath kOllamaChatPaths[] = {{"messages[].images[]", true}};
constexpr MediaPath kOllamaGeneratePaths[] = {{"images[]", true}};
// Anthropic's base64 image sources, whose media type is a key beside the payload.
constexpr MediaPath kAnthropicPaths[] = {
    {"messages[].content[].source.data", true, false},
    {"messages[].content[].content[].source.data", true, false},
};

std::span<const MediaPath> PathsOf(MediaLayout layout) {
  switch (layout) {
    case MediaLayout::kChatCompletions:
      return kChatPaths;
    case MediaLayout::kResponses:
      return kResponsesPaths;
    case MediaLayout::kOllamaChat:
      return kOllamaChatPaths;
    case MediaLayout::kOllamaGenerate:
      return kOllamaGeneratePaths;
    case MediaLayout::kAnthropicMessages:
      return kAnthropicPaths;
  }
  return {};
}

// Where the scan is in the JSON text: an object (with the key of the value being read,
// empty when it was written with escapes) or an array (with the index of its element).
struct Level {
  bool object = false;
  std::string key;
  size_t index = 0;
};

// A data URL's payload in the body, and the field it is the value of.
struct Payload {
  std::string field;
  size_t begin = 0;
  size_t end = 0;
};

bool EqualsNoCase(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != lower[i]) return false;
  }
  return true;
}

// Whether `levels`, from the body's top, lead to a value at `path`.
bool AtPath(const std::vector<Level>& levels, std::string_view path) {
  size_t depth = 0;
  size_t i = 0;
  while (i < path.size()) {
    if (depth == levels.size()) return false;
    const Level& level = levels[depth++];
    if (path.substr(i, 2) == "[]") {
      if (level.object) return false;
      i += 2;
      continue;
    }
    if (path[i] == '.') ++i;
    const size_t end = std::min(path.find_first_of(".[", i), path.size());
    if (!level.object || level.key != path.substr(i, end - i)) return false;
    i = end;
  }
  return depth == levels.size();
}

// The field the request parser names the value at `levels` by ("messages[0].images[1]").
std::string FieldAt(const std::vector<Level>& levels) {
  std::string field;
  for (const Level& level : levels) {
    field = level.object ? JoinField(field, level.key) : IndexField(field, level.index);
  }
  return field;
}

// [begin, end) of the payload of `value` (a string's text at `offset` in the body) when it
// is a base64 data URL, else nullopt.
std::optional<std::pair<size_t, size_t>> Base64Payload(std::string_view value, size_t offset) {
  if (value.size() < 5 || !EqualsNoCase(value.substr(0, 5), "data:")) return std::nullopt;
  const size_t comma = value.find(',');
  constexpr std::string_view kBase64 = ";base64";
  if (comma == std::string_view::npos || comma < 5 + kBase64.size() ||
      !EqualsNoCase(value.substr(comma - kBase64.size(), kBase64.size()), kBase64)) {
    return std::nullopt;
  }
  return std::make_pair(offset + comma + 1, offset + value.size());
}

// The payloads at `layout`'s media fields, in body order; nullopt when the body's
// brackets or strings do not close (the JSON parser reports that, on the body as it came).
std::optional<std::vector<Payload>> FindPayloads(std::string_view text, MediaLayout layout) {
  const std::span<const MediaPath> paths = PathsOf(layout);
  std::vector<Payload> found;
  std::vector<Level> levels;  // down to kMediaDepth; deeper ones are only counted
  size_t deeper = 0;
  bool expect_key = false;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      if (levels.size() < kMediaDepth) {
        levels.emplace_back().object = c == '{';
      } else {
        ++deeper;
      }
      expect_key = c == '{';
    } else if (c == '}' || c == ']') {
      if (deeper > 0) {
        --deeper;
      } else if (levels.empty() || levels.back().object != (c == '}')) {
        return std::nullopt;
      } else {
        levels.pop_back();
      }
    } else if (c == ',' && deeper == 0) {
      if (levels.empty()) return std::nullopt;
      if (levels.back().object) {
        expect_key = true;
      } else {
        ++levels.back().index;
      }
    } else if (c == ':') {
      expect_key = false;
    } else if (c == '"') {
      const size_t begin = i + 1;
      size_t end = begin;
      bool escaped = false;
      while (true) {
        end = text.find_first_of("\"\\", end);
        if (end == std::string_view::npos) return std::nullopt;
        if (text[end] == '"') break;
        escaped = true;
        end += 2;  // the backslash and the character it escapes
      }
      const std::string_view value = text.substr(begin, end - begin);
      const bool followed = deeper == 0 && !levels.empty();
      if (followed && expect_key && levels.back().object) {
        levels.back().key = escaped ? "" : std::string(value);
      } else if (followed && !escaped && !value.empty()) {
        for (const MediaPath& media : paths) {
          if (!AtPath(levels, media.path)) continue;
          std::optional<std::pair<size_t, size_t>> payload;
          if (media.data_url) payload = Base64Payload(value, begin);
          if (!payload && media.bare && !EqualsNoCase(value.substr(0, 5), "data:")) {
            payload = std::make_pair(begin, end);
          }
          if (payload) found.push_back({FieldAt(levels), payload->first, payload->second});
          break;
        }
      }
      i = end;
    }
    ++i;
  }
  if (!levels.empty()) return std::nullopt;
  return found;
}

}  // namespace

std::optional<std::vector<uint8_t>> InlineMedia::Take(std::string_view field) {
  for (auto& [name, bytes] : decoded_) {
    if (name == field) {
      std::optional<std::vector<uint8_t>> out = std::move(bytes);
      name.clear();  // handed out
      return out;
    }
  }
  return std::nullopt;
}

InlineMedia TakeInlineMedia(std::string* body, MediaLayout layout) {
  InlineMedia out;
  const std::optional<std::vector<Payload>> payloads = FindPayloads(*body, layout);
  if (!payloads || payloads->empty()) return out;
  std::string& text = *body;
  char* data = text.data();
  size_t kept = 0;  // the body before this offset is final
  size_t next = 0;  // the body from here on is still to be moved down to `kept`
  auto keep_until = [&](size_t end) {
    std::memmove(data + kept, data + next, end - next);
    kept += end - next;
  };
  for (const Payload& p : *payloads) {
    std::vector<uint8_t> bytes;
    try {
      bytes = DecodeBase64(std::string_view(text).substr(p.begin, p.end - p.begin), p.field);
    } catch (const FieldError&) {
      continue;  // left for the request parser to report
    }
    keep_until(p.begin);
    next = p.end;
    for (auto& [name, earlier] : out.decoded_) {
      if (name == p.field) {  // the later value wins, as in the parsed JSON
        name.clear();
        earlier = {};
      }
    }
    out.decoded_.emplace_back(p.field, std::move(bytes));
  }
  keep_until(text.size());
  text.resize(kept);
  text.shrink_to_fit();
  return out;
}

}  // namespace qvl
