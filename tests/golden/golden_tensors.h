// Test helper: the reference's golden tensors of one fixture case
// (tests/data/tiny-qwen3vl/cases/NN_name), for every test that compares with them.
//
// A case holds its tensors in tensors.safetensors (the upstream fixture format). The
// repository's copies leave out the preprocessor's outputs (pixel_values,
// pixel_values_videos), which qvl reproduces bit for bit: derived_digests.json holds their
// dtype, shape and SHA-256 instead (scripts/slim_golden_tensors.py). Reading such a tensor
// preprocesses the case's images or frames with qvl, checks the bytes against the digest
// (throwing an error that names the case and the tensor when they differ) and returns
// them, so everything downstream runs on the reference's exact input. A tensor present in
// tensors.safetensors is always read from there.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace qvl {

// A tensor of the reference's, or one to compare with it: safetensors dtype ("F32",
// "I64"), shape, and the raw little-endian bytes.
struct RawTensor {
  std::string dtype;
  std::vector<int64_t> shape;
  std::span<const uint8_t> bytes;
};

// `values` (not copied: they must outlive the result) as an F32 tensor of `shape`.
RawTensor RawF32Tensor(const std::vector<float>& values, std::vector<int64_t> shape);

// The reference's tensors of one case.
class GoldenTensors {
 public:
  // `case_dir` holds tensors.safetensors, optionally derived_digests.json, and meta.json
  // with the inputs; the preprocessor configs come from the fixture's model folder
  // (case_dir/../../model).
  explicit GoldenTensors(const std::string& case_dir);
  ~GoldenTensors();
  GoldenTensors(const GoldenTensors&) = delete;
  GoldenTensors& operator=(const GoldenTensors&) = delete;

  const std::string& name() const { return name_; }
  // Every tensor of the reference, stored or digested, sorted by name.
  std::vector<std::string> TensorNames() const;
  bool Has(const std::string& tensor) const;
  // False for a tensor the case holds only as a digest.
  bool Stored(const std::string& tensor) const;
  std::vector<int64_t> Shape(const std::string& tensor) const;

  // The reference's tensor (throws when missing, of another dtype, or when qvl's
  // preprocessing does not give the digested bytes).
  RawTensor Tensor(const std::string& tensor) const;
  std::vector<float> F32(const std::string& tensor) const;
  std::vector<int64_t> I64(const std::string& tensor) const;

  // How `got` differs from the reference's `tensor`: "" when it matches, else a message
  // naming the case and the tensor. A stored tensor matches within `tolerance` (max abs
  // difference); a digested one only bit for bit.
  std::string Mismatch(const std::string& tensor, const RawTensor& got, double tolerance) const;

 private:
  struct Digest {
    std::string dtype;
    std::vector<int64_t> shape;
    std::string sha256;
  };
  const RawTensor& Derived(const std::string& tensor) const;
  std::string DigestMismatch(const std::string& tensor, const RawTensor& got) const;

  std::string dir_;
  std::string name_;
  std::string file_;  // tensors.safetensors
  std::map<std::string, RawTensor> stored_;
  std::map<std::string, Digest> digests_;
  // Preprocessed tensors, kept once computed and checked (map nodes do not move).
  mutable std::map<std::string, std::vector<uint8_t>> derived_bytes_;
  mutable std::map<std::string, RawTensor> derived_;
};

}  // namespace qvl
