#include "model/quantization_config.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/error.h"
#include "base/json_fields.h"

namespace qvl {
namespace {

constexpr int64_t kMaxBlock = int64_t{1} << 16;

// Qwen's -FP8 releases: {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [r, c]}.
WeightQuantization ParseFp8(const JsonFieldReader& q) {
  const std::string fmt = q.OptionalString("fmt").value_or("e4m3");
  if (fmt != "e4m3") {
    q.FailField("fmt", StrCat("is \"", fmt, "\"; qvl reads fp8 weights in \"e4m3\""));
  }
  if (!q.Has("weight_block_size")) {
    q.FailField("weight_block_size",
                "is missing; qvl reads fp8 weights with a scale per block (weight_scale_inv), "
                "such as [128, 128]");
  }
  const std::vector<int64_t> block = q.IntList("weight_block_size", 1, kMaxBlock);
  if (block.size() != 2) {
    q.FailField("weight_block_size",
                StrCat("has ", block.size(), " entries; it needs 2, [rows, columns]"));
  }
  WeightQuantization w;
  w.method = WeightQuantization::Method::kFp8;
  w.block_rows = static_cast<int>(block[0]);
  w.block_cols = static_cast<int>(block[1]);
  return w;
}

// One config group's weights (compressed-tensors' QuantizationArgs) stored in `format`.
WeightQuantization ParseGroupWeights(const JsonFieldReader& a, const std::string& format,
                                     const JsonFieldReader& q) {
  WeightQuantization w;
  w.method = WeightQuantization::Method::kCompressedTensors;
  const std::string type = a.OptionalString("type").value_or("int");
  w.bits = static_cast<int>(a.OptionalInt("num_bits", 1, 64).value_or(8));
  w.symmetric = a.OptionalBool("symmetric", true);
  if (a.OptionalBool("dynamic", false)) {
    a.FailField("dynamic", "is true; qvl reads weights stored quantized, not quantized on the fly");
  }
  if (format == "float-quantized") {
    if (type != "float" || w.bits != 8) {
      a.FailField("num_bits", StrCat("is ", w.bits, " with type \"", type,
                                     "\"; qvl reads float-quantized weights as fp8 e4m3 (8 bits, "
                                     "type \"float\")"));
    }
    w.codes = DType::kF8E4M3;
  } else if (format == "int-quantized" || format == "naive-quantized") {
    if (type != "int" || w.bits != 8) {
      a.FailField("num_bits", StrCat("is ", w.bits, " with type \"", type, "\"; qvl reads ", format,
                                     " weights as int8 (8 bits, type \"int\")"));
    }
    w.codes = DType::kI8;
  } else if (format == "pack-quantized") {
    if (type != "int" || (w.bits != 4 && w.bits != 8)) {
      a.FailField("num_bits", StrCat("is ", w.bits, " with type \"", type,
                                     "\"; qvl reads pack-quantized weights of 4 or 8 bits, type "
                                     "\"int\""));
    }
    w.codes = DType::kI32;
  } else {
    q.FailField("format", StrCat("is \"", format,
                                 "\"; qvl reads compressed-tensors checkpoints in the formats "
                                 "float-quantized, int-quantized, naive-quantized and "
                                 "pack-quantized"));
  }
  const std::optional<int64_t> group_size = a.OptionalInt("group_size", 1, kMaxBlock);
  const std::string strategy =
      a.OptionalString("strategy").value_or(group_size ? "group" : "tensor");
  if (strategy == "tensor") {
    w.block_rows = w.block_cols = 0;
  } else if (strategy == "channel") {
    w.block_rows = 1;
    w.block_cols = 0;
  } else if (strategy == "group") {
    if (!group_size) a.FailField("group_size", "is missing; the group strategy needs it");
    w.block_rows = 1;
    w.block_cols = static_cast<int>(*group_size);
  } else if (strategy == "block") {
    const std::vector<int64_t> block = a.IntList("block_structure", 1, kMaxBlock);
    if (block.size() != 2) {
      a.FailField("block_structure",
                  StrCat("has ", block.size(), " entries; it needs 2, [rows, columns]"));
    }
    w.block_rows = static_cast<int>(block[0]);
    w.block_cols = static_cast<int>(block[1]);
  } else {
    a.FailField("strategy", StrCat("is \"", strategy,
                                   "\"; qvl reads weights quantized per tensor, channel, group or "
                                   "block"));
  }
  if (!w.symmetric && (w.codes == DType::kF8E4M3 || w.block_rows != 1)) {
    a.FailField("symmetric",
                "is false; qvl reads zero points only for int weights per channel or group");
  }
  if (const nlohmann::json* order = a.Find("actorder");
      order != nullptr && order->is_string() && *order == "group") {
    if (strategy != "group") {
      a.FailField("actorder", StrCat("is \"group\" with strategy \"", strategy,
                                     "\"; a column order needs groups"));
    }
    w.column_groups = true;
  }
  return w;
}

// AutoAWQ's {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true,
// "version": "gemm"} (older files spell them w_bit and q_group_size).
WeightQuantization ParseAwq(const JsonFieldReader& q) {
  const char* bits_key = q.Has("w_bit") ? "w_bit" : "bits";
  const int64_t bits = q.Int(bits_key, 1, 64);
  if (bits != 4) q.FailField(bits_key, StrCat("is ", bits, "; qvl reads 4-bit AWQ weights"));
  std::string version = q.OptionalString("version").value_or("gemm");
  for (char& ch : version) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (version != "gemm") {
    q.FailField("version", StrCat("is \"", version,
                                  "\"; qvl reads AWQ weights packed for the \"gemm\" kernels"));
  }
  if (!q.OptionalBool("zero_point", true)) {
    q.FailField("zero_point", "is false; qvl reads AWQ weights with zero points");
  }
  const char* group_key = q.Has("q_group_size") ? "q_group_size" : "group_size";
  const int64_t group = q.Int(group_key, -1, kMaxBlock);
  if (group == 0) q.FailField(group_key, "is 0; it must be positive, or -1 for whole columns");
  WeightQuantization w;
  w.method = WeightQuantization::Method::kAwq;
  w.codes = DType::kI32;
  w.bits = 4;
  w.symmetric = false;
  w.block_rows = 1;
  w.block_cols = group < 0 ? 0 : static_cast<int>(group);
  return w;
}

// transformers' BitsAndBytesConfig: {"quant_method": "bitsandbytes", "load_in_4bit": true,
// "bnb_4bit_quant_type": "nf4", "bnb_4bit_quant_storage": "uint8", ...} or
// {"load_in_8bit": true, ...}. Whether absmax is double-quantized, the block size and the
// dtype are read from each weight's quant_state.
WeightQuantization ParseBitsAndBytes(const JsonFieldReader& q) {
  const auto flag = [&](const char* key) {
    return q.OptionalBool(key, q.OptionalBool(StrCat("_", key), false));
  };
  WeightQuantization w;
  w.method = WeightQuantization::Method::kBitsAndBytes;
  if (flag("load_in_8bit")) {
    w.codes = DType::kI8;
    w.block_rows = 1;  // a scale per row (SCB)
    return w;
  }
  if (!flag("load_in_4bit")) {
    q.FailField("load_in_4bit",
                "and load_in_8bit are both false; qvl reads bitsandbytes weights stored in 4 or "
                "8 bits");
  }
  const std::string type = q.OptionalString("bnb_4bit_quant_type").value_or("fp4");
  if (type != "nf4" && type != "fp4") {
    q.FailField(
        "bnb_4bit_quant_type",
        StrCat("is \"", type, "\"; qvl reads 4-bit bitsandbytes weights as \"nf4\" or \"fp4\""));
  }
  const std::string storage = q.OptionalString("bnb_4bit_quant_storage").value_or("uint8");
  if (storage != "uint8") {
    q.FailField("bnb_4bit_quant_storage",
                StrCat("is \"", storage, "\"; qvl reads 4-bit codes stored as \"uint8\""));
  }
  w.codes = DType::kU8;
  w.bits = 4;
  w.four_bit = type == "nf4" ? FourBitType::kNf4 : FourBitType::kFp4;
  return w;
}

// GPTQModel's and AutoGPTQ's {"quant_method": "gptq", "bits": 4, "group_size": 128,
// "desc_act": true, "sym": true, "checkpoint_format": "gptq"} (newer files spell the
// format "format").
WeightQuantization ParseGptq(const JsonFieldReader& q) {
  const int64_t bits = q.Int("bits", 1, 64);
  if (bits != 2 && bits != 4 && bits != 8) {
    q.FailField("bits", StrCat("is ", bits, "; qvl reads GPTQ weights of 2, 4 or 8 bits"));
  }
  const char* format_key = q.Has("format") ? "format" : "checkpoint_format";
  const std::string format = q.OptionalString(format_key).value_or("gptq");
  if (format != "gptq" && format != "gptq_v2") {
    q.FailField(format_key, StrCat("is \"", format,
                                   "\"; qvl reads GPTQ weights in the \"gptq\" and \"gptq_v2\" "
                                   "layouts"));
  }
  if (const std::string pack = q.OptionalString("pack_dtype").value_or("int32"); pack != "int32") {
    q.FailField("pack_dtype", StrCat("is \"", pack, "\"; qvl reads GPTQ codes packed in int32"));
  }
  if (q.OptionalObject("dynamic") && !q.Find("dynamic")->empty()) {
    q.FailField("dynamic",
                "quantizes some modules differently; qvl reads one scheme for all of them");
  }
  const int64_t group = q.Int("group_size", -1, kMaxBlock);
  if (group == 0) q.FailField("group_size", "is 0; it must be positive, or -1 for whole rows");
  WeightQuantization w;
  w.method = WeightQuantization::Method::kGptq;
  w.codes = DType::kI32;
  w.bits = static_cast<int>(bits);
  w.symmetric = false;  // the zero points are stored either way
  w.block_rows = 1;
  w.block_cols = group < 0 ? 0 : static_cast<int>(group);
  w.column_groups = true;
  w.zeros_minus_one = format == "gptq";
  return w;
}

bool SameWeights(const WeightQuantization& a, const WeightQuantization& b) {
  return a.codes == b.codes && a.bits == b.bits && a.symmetric == b.symmetric &&
         a.block_rows == b.block_rows && a.block_cols == b.block_cols &&
         a.column_groups == b.column_groups;
}

// compressed-tensors: one scheme for the weights of every quantized Linear layer, in the
// config group(s) whose "weights" are set; layers the checkpoint leaves unquantized
// ("ignore") keep their float weights and are read as such.
WeightQuantization ParseCompressedTensors(const JsonFieldReader& q) {
  if (const std::optional<JsonFieldReader> sparsity = q.OptionalObject("sparsity_config")) {
    const std::string format = sparsity->OptionalString("format").value_or("dense");
    if (format != "dense") {
      sparsity->FailField("format",
                          StrCat("is \"", format, "\"; qvl reads dense weights, not sparse ones"));
    }
  }
  const std::string format = q.OptionalString("format").value_or("");
  const JsonFieldReader groups = q.Object("config_groups");
  const nlohmann::json& items = *q.Find("config_groups");
  std::optional<WeightQuantization> found;
  for (auto it = items.begin(); it != items.end(); ++it) {
    if (!it->is_object()) {
      groups.FailField(it.key(), StrCat("must be an object, got ", JsonTypeName(*it)));
    }
    const JsonFieldReader g(*it, groups.source(), groups.FieldName(it.key()));
    const std::optional<JsonFieldReader> weights = g.OptionalObject("weights");
    if (!weights) continue;
    const WeightQuantization w =
        ParseGroupWeights(*weights, g.OptionalString("format").value_or(format), q);
    if (found && !SameWeights(*found, w)) {
      q.FailField("config_groups",
                  "quantize the weights of different layers differently; qvl reads one scheme "
                  "for all of them");
    }
    found = w;
  }
  if (!found) q.FailField("config_groups", "has no group with quantized weights");
  return *found;
}

}  // namespace

std::string WeightQuantization::MethodName() const {
  switch (method) {
    case Method::kFp8:
      return "fp8";
    case Method::kCompressedTensors:
      return "compressed-tensors";
    case Method::kAwq:
      return "awq";
    case Method::kBitsAndBytes:
      return "bitsandbytes";
    case Method::kGptq:
      return "gptq";
    default:
      return "none";
  }
}

std::string WeightQuantization::CodesName() const {
  if (codes == DType::kF8E4M3) return "fp8 e4m3";
  if (codes == DType::kU8) return four_bit == FourBitType::kNf4 ? "nf4" : "fp4";
  return StrCat("int", bits, symmetric ? "" : " with zero points");
}

std::string WeightQuantization::BlocksName() const {
  if (codes == DType::kU8) return "block";
  if (block_rows == 0 && block_cols == 0) return "tensor";
  if (block_rows == 1 && block_cols == 0) return "channel";
  if (block_rows == 1) return StrCat("group of ", block_cols);
  return StrCat(block_rows, "x", block_cols, " block");
}

WeightQuantization ParseWeightQuantization(const JsonFieldReader& top) {
  if (!top.Has("quantization_config")) return {};
  const JsonFieldReader q = top.Object("quantization_config");
  const std::string method = q.String("quant_method");
  if (method == "fp8") return ParseFp8(q);
  if (method == "compressed-tensors") return ParseCompressedTensors(q);
  if (method == "awq") return ParseAwq(q);
  if (method == "bitsandbytes") return ParseBitsAndBytes(q);
  if (method == "gptq") return ParseGptq(q);
  q.FailField("quant_method",
              StrCat("is \"", method,
                     "\", which qvl does not read: it reads unquantized checkpoints (BF16, F16, "
                     "F32), which it quantizes itself (--dtype q8, q4, w8a8), block-wise fp8 "
                     "ones (\"fp8\", as in Qwen's -FP8 releases), llm-compressor's "
                     "(\"compressed-tensors\": fp8, int8, or packed int4/int8 weights), "
                     "AutoAWQ's (\"awq\", 4-bit \"gemm\"), bitsandbytes' "
                     "(\"bitsandbytes\": nf4, fp4 or int8 weights) and GPTQ's (\"gptq\": 2, "
                     "4 or 8 bits)"));
}

}  // namespace qvl
