// Strict base64 (RFC 4648, standard alphabet, '=' padding required): images arrive as
// data: URLs, and a silently skipped character would turn into a corrupt image far from
// its cause. Line breaks are the one exception, skipped wherever they are: MIME's wrapped
// base64 (76-column lines from Python's encodebytes or the base64 tool) carries no data
// in them, and Ollama and vLLM take it. Offsets in errors count the data without them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace qvl {

// Decoded size of `text` if it is valid base64 of that length, computed without
// decoding, so a size limit can be checked before memory is allocated.
size_t Base64DecodedSize(std::string_view text);

// Decodes `text`. Throws FieldError(kInvalidArgument, field, ...) naming the first bad
// character and its offset, a length that is not a multiple of 4, or misplaced padding.
std::vector<uint8_t> DecodeBase64(std::string_view text, std::string_view field);

// `bytes` as padded base64: a payload cut from a request (inline_media.h) written back
// where a data URL is kept for a later request.
std::string EncodeBase64(std::span<const uint8_t> bytes);

}  // namespace qvl
