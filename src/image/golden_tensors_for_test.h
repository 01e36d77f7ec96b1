// Test helper: the fixture cases' tensors.safetensors, read without the model layer.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/mapped_file.h"

namespace qvl {

// Just enough safetensors for the goldens (image/ must not depend on model/): the
// 8-byte header length, the JSON header, then little-endian tensor data.
class GoldenTensors {
 public:
  explicit GoldenTensors(const std::string& path) : file_(ReadFileToString(path)) {
    uint64_t header_size = 0;
    std::memcpy(&header_size, file_.data(), 8);
    header_ = nlohmann::json::parse(file_.substr(8, header_size));
    data_offset_ = 8 + header_size;
  }

  bool Has(const std::string& name) const { return header_.contains(name); }

  std::vector<int64_t> Shape(const std::string& name) const {
    return header_.at(name).at("shape").get<std::vector<int64_t>>();
  }

  template <typename T>
  std::vector<T> Values(const std::string& name, const char* dtype) const {
    const nlohmann::json& entry = header_.at(name);
    EXPECT_EQ(entry.at("dtype"), dtype) << name;
    const size_t begin = entry.at("data_offsets")[0], end = entry.at("data_offsets")[1];
    std::vector<T> values((end - begin) / sizeof(T));
    std::memcpy(values.data(), file_.data() + data_offset_ + begin, end - begin);
    return values;
  }

 private:
  std::string file_;
  nlohmann::json header_;
  size_t data_offset_ = 0;
};

}  // namespace qvl
