#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"
#include "model/safetensors.h"
#include "model/staged_file_writer.h"

namespace qvl {
namespace {}  // namespace

size_t TensorSpec::nbytes() const {
  size_t n = DTypeSize(dtype);
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, static_cast<size_t>(d), &n)) {
      Fail(ErrorCode::kInvalidArgument, "tensor ", name, ": invalid shape for writing");
    }
  }
  return n;
}

std::string EncodeSafetensorsHeader(const std::vector<TensorSpec>& specs,
                                    const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string_view> names;
  size_t offset = 0;
  for (const TensorSpec& spec : specs) {
    if (spec.name.empty() || spec.name == "__metadata__" || !names.insert(spec.name).second) {
      Fail(ErrorCode::kInvalidArgument, "cannot write tensor \"", spec.name,
           "\": the name is empty, reserved or repeated");
    }
    const size_t end = offset + spec.nbytes();
    nlohmann::ordered_json entry;
    entry["dtype"] = std::string(DTypeName(spec.dtype));
    entry["shape"] = spec.shape;
    entry["data_offsets"] = {offset, end};
    header[spec.name] = std::move(entry);
    offset = end;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

void WriteSafetensors(const std::string& path, const std::vector<TensorSpec>& specs,
                      const TensorFill& fill, const std::map<std::string, std::string>& metadata) {
  const std::string header = EncodeSafetensorsHeader(specs, metadata);
  size_t offset = 0;
  for (const TensorSpec& spec : specs) {
    // The reader refuses elements that straddle their natural alignment.
    if (offset % DTypeSize(spec.dtype) != 0) {
      Fail(ErrorCode::kInvalidArgument, "cannot write tensor ", spec.name, " at data offset ",
           offset, ": not aligned to its ", DTypeSize(spec.dtype),
           "-byte elements (order tensors by element size, largest first)");
    }
    offset += spec.nbytes();
  }

  StagedFileWriter out(path);
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(uint64_t{header.size()} >> (8 * i));
  out.Append(length, 8);
  out.Append(reinterpret_cast<const uint8_t*>(header.data()), header.size());
  // The header is padded to 8 bytes, every tensor starts aligned and the buffer size is a
  // multiple of 8, so room() always holds whole elements.
  for (size_t index = 0; index < specs.size(); ++index) {
    const size_t nbytes = specs[index].nbytes();
    for (size_t done = 0; done < nbytes;) {
      const size_t chunk = std::min(out.room(), nbytes - done);
      fill(index, done, out.cursor(), chunk);
      out.Advance(chunk);
      done += chunk;
    }
  }
  out.Commit();
}

void WriteSafetensors(const std::string& path, const std::vector<TensorData>& tensors) {
  // Largest elements first, as the reference writer does, keeps every tensor aligned.
  std::vector<const TensorData*> order;
  for (const TensorData& t : tensors) {
    if (t.bytes.size() != t.spec.nbytes()) {
      Fail(ErrorCode::kInvalidArgument, "tensor ", t.spec.name, ": ", t.bytes.size(),
           " bytes given, its dtype and shape need ", t.spec.nbytes());
    }
    order.push_back(&t);
  }
  std::stable_sort(order.begin(), order.end(), [](const TensorData* a, const TensorData* b) {
    return DTypeSize(a->spec.dtype) > DTypeSize(b->spec.dtype);
  });
  std::vector<TensorSpec> specs;
  for (const TensorData* t : order) specs.push_back(t->spec);
  WriteSafetensors(path, specs, [&](size_t index, size_t offset, uint8_t* dst, size_t nbytes) {
    std::memcpy(dst, order[index]->bytes.data() + offset, nbytes);
  });
}

}  // namespace qvl
