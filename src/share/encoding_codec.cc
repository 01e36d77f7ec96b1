#include "share/encoding_codec.h"

#include <cstring>

#include "share/value_envelope.h"

namespace qvl {
namespace {

constexpr std::string_view kMagic = "QVLE";

struct Header {
  int64_t tokens;
  int64_t dim;
  uint64_t deepstack_layers;
};

void AppendFloats(const std::vector<float>& v, std::string* out) {
  out->append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

}  // namespace

std::string EncodeVisionOutput(std::string_view key, const VisionOutput& out) {
  const int64_t dim = out.tokens > 0 ? static_cast<int64_t>(out.embeds.size()) / out.tokens : 0;
  const Header h{out.tokens, dim, out.deepstack.size()};
  std::string payload;
  payload.reserve(sizeof(h) + (out.embeds.size() * (1 + out.deepstack.size())) * sizeof(float));
  payload.append(reinterpret_cast<const char*>(&h), sizeof(h));
  AppendFloats(out.embeds, &payload);
  for (const std::vector<float>& layer : out.deepstack) AppendFloats(layer, &payload);
  return SealValue(kMagic, kEncodingFormatVersion, key, payload);
}

std::optional<VisionOutput> DecodeVisionOutput(std::string_view key, std::string_view value,
                                               const EncodingShape& shape) {
  const std::optional<std::string_view> payload =
      OpenValue(kMagic, kEncodingFormatVersion, key, value);
  if (!payload || payload->size() < sizeof(Header)) return std::nullopt;
  Header h;
  std::memcpy(&h, payload->data(), sizeof(h));
  if (h.tokens != shape.tokens || h.dim != shape.dim ||
      h.deepstack_layers != shape.deepstack_layers)
    return std::nullopt;
  const size_t floats = static_cast<size_t>(shape.tokens * shape.dim);
  if (payload->size() != sizeof(Header) + floats * (1 + shape.deepstack_layers) * sizeof(float))
    return std::nullopt;
  VisionOutput out;
  out.tokens = shape.tokens;
  const char* p = payload->data() + sizeof(Header);
  auto take = [&](std::vector<float>* v) {
    v->resize(floats);
    std::memcpy(v->data(), p, floats * sizeof(float));
    p += floats * sizeof(float);
  };
  take(&out.embeds);
  out.deepstack.resize(shape.deepstack_layers);
  for (std::vector<float>& layer : out.deepstack) take(&layer);
  return out;
}

}  // namespace qvl
