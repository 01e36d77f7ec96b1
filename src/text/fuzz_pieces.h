// The piece boundaries of the streaming fuzz targets (tool calls, reasoning, stop
// strings): each reads how to cut its text from the fuzz input, so that libFuzzer steers
// the boundaries into tags, stop strings and UTF-8 characters.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace qvl::fuzz {

// Input layout: one byte n, then n % 32 bytes that give the piece lengths (each byte %
// 16, so empty pieces come too), then the rest. Returns the lengths and leaves `data` at
// the rest. No lengths means one piece.
inline std::vector<size_t> TakePieceLengths(std::string_view* data) {
  std::vector<size_t> lengths;
  if (data->empty()) return lengths;
  const size_t count = std::min<size_t>(static_cast<uint8_t>(data->front()) % 32, data->size() - 1);
  for (size_t i = 1; i <= count; ++i) lengths.push_back(static_cast<uint8_t>((*data)[i]) % 16);
  data->remove_prefix(count + 1);
  return lengths;
}

// `text` cut by `lengths` taken in turn, round and round; a round of only empty pieces
// gives the rest as one piece. Pieces cover the text exactly, in order.
inline std::vector<std::string_view> CutIntoPieces(std::string_view text,
                                                   const std::vector<size_t>& lengths) {
  std::vector<std::string_view> pieces;
  size_t round = 0;
  for (const size_t n : lengths) round += n;
  if (round == 0) return {text};
  for (size_t i = 0; !text.empty(); ++i) {
    const size_t n = std::min(lengths[i % lengths.size()], text.size());
    pieces.push_back(text.substr(0, n));
    text.remove_prefix(n);
  }
  return pieces;
}

// One piece a byte.
inline std::vector<std::string_view> Bytes(std::string_view text) {
  std::vector<std::string_view> pieces;
  for (size_t i = 0; i < text.size(); ++i) pieces.push_back(text.substr(i, 1));
  return pieces;
}

}  // namespace qvl::fuzz
