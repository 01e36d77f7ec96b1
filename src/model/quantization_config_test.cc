#include "model/quantization_config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_fields.h"

namespace qvl {
namespace {

using json = nlohmann::json;
using Method = WeightQuantization::Method;

WeightQuantization Parse(const json& quantization_config) {
  const json top = {{"quantization_config", quantization_config}};
  return ParseWeightQuantization(JsonFieldReader(top, "m/config.json", ""));
}

std::string ErrorOf(const json& quantization_config) {
  try {
    Parse(quantization_config);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// compressed-tensors' quantization_config as llm-compressor writes it, one group whose
// weights are `weights` in `format`.
json Compressed(const std::string& format, const json& weights) {
  json w = {{"num_bits", 8},         {"type", "int"},
            {"symmetric", true},     {"strategy", "channel"},
            {"group_size", nullptr}, {"block_structure", nullptr},
            {"dynamic", false},      {"actorder", nullptr},
            {"observer", "minmax"},  {"observer_kwargs", json::object()}};
  w.update(weights);
  return {{"quant_method", "compressed-tensors"},
          {"format", format},
          {"quantization_status", "compressed"},
          {"global_compression_ratio", nullptr},
          {"ignore", {"lm_head", "re:.*visual.*"}},
          {"kv_cache_scheme", nullptr},
          {"sparsity_config", json::object()},
          {"config_groups",
           {{"group_0",
             {{"targets", {"Linear"}},
              {"weights", w},
              {"input_activations",
               {{"num_bits", 8}, {"type", "float"}, {"strategy", "token"}, {"dynamic", true}}},
              {"output_activations", nullptr}}}}}};
}

TEST(WeightQuantization, NoneWithoutAQuantizationConfig) {
  const json top = {{"model_type", "qwen3_vl"}};
  EXPECT_FALSE(ParseWeightQuantization(JsonFieldReader(top, "m/config.json", "")).present());
}

// Qwen3-VL-2B-Instruct-FP8's quantization_config.
TEST(WeightQuantization, ReadsQwensBlockwiseFp8) {
  const WeightQuantization q = Parse({{"activation_scheme", "dynamic"},
                                      {"fmt", "e4m3"},
                                      {"quant_method", "fp8"},
                                      {"weight_block_size", {128, 64}},
                                      {"modules_to_not_convert", {"lm_head"}}});
  EXPECT_EQ(q.method, Method::kFp8);
  EXPECT_EQ(q.MethodName(), "fp8");
  EXPECT_EQ(q.codes, DType::kF8E4M3);
  EXPECT_TRUE(q.symmetric);
  EXPECT_EQ(q.block_rows, 128);
  EXPECT_EQ(q.block_cols, 64);
  EXPECT_EQ(q.CodesName(), "fp8 e4m3");
  EXPECT_EQ(q.BlocksName(), "128x64 block");

  EXPECT_EQ(ErrorOf({{"quant_method", "fp8"}, {"fmt", "e5m2"}, {"weight_block_size", {128, 128}}}),
            "m/config.json: quantization_config.fmt is \"e5m2\"; qvl reads fp8 weights in "
            "\"e4m3\"");
  EXPECT_EQ(ErrorOf({{"quant_method", "fp8"}, {"activation_scheme", "static"}}),
            "m/config.json: quantization_config.weight_block_size is missing; qvl reads fp8 "
            "weights with a scale per block (weight_scale_inv), such as [128, 128]");
  EXPECT_EQ(ErrorOf({{"quant_method", "fp8"}, {"weight_block_size", {128}}}),
            "m/config.json: quantization_config.weight_block_size has 1 entries; it needs 2, "
            "[rows, columns]");
  EXPECT_EQ(ErrorOf({{"quant_method", "fp8"}, {"weight_block_size", {0, 128}}}),
            "m/config.json: quantization_config.weight_block_size[0] is 0, must be between 1 and "
            "65536");
}

// The schemes llm-compressor's examples write (FP8_DYNAMIC, FP8_BLOCK, W8A8, W4A16,
// W4A16_ASYM, W8A16), each as the block its scales cover.
TEST(WeightQuantization, ReadsCompressedTensorsSchemes) {
  const WeightQuantization fp8 =
      Parse(Compressed("float-quantized", {{"type", "float"}, {"strategy", "channel"}}));
  EXPECT_EQ(fp8.method, Method::kCompressedTensors);
  EXPECT_EQ(fp8.MethodName(), "compressed-tensors");
  EXPECT_EQ(fp8.codes, DType::kF8E4M3);
  EXPECT_EQ(fp8.BlocksName(), "channel");
  EXPECT_EQ(fp8.block_rows, 1);
  EXPECT_EQ(fp8.block_cols, 0);

  const WeightQuantization block = Parse(
      Compressed("float-quantized",
                 {{"type", "float"}, {"strategy", "block"}, {"block_structure", {128, 128}}}));
  EXPECT_EQ(block.BlocksName(), "128x128 block");

  const WeightQuantization w8a8 = Parse(Compressed("int-quantized", json::object()));
  EXPECT_EQ(w8a8.codes, DType::kI8);
  EXPECT_EQ(w8a8.CodesName(), "int8");

  const WeightQuantization w4a16 = Parse(
      Compressed("pack-quantized", {{"num_bits", 4}, {"strategy", "group"}, {"group_size", 128}}));
  EXPECT_EQ(w4a16.codes, DType::kI32);
  EXPECT_TRUE(w4a16.packed());
  EXPECT_EQ(w4a16.bits, 4);
  EXPECT_TRUE(w4a16.symmetric);
  EXPECT_EQ(w4a16.block_rows, 1);
  EXPECT_EQ(w4a16.block_cols, 128);
  EXPECT_EQ(w4a16.CodesName(), "int4");
  EXPECT_EQ(w4a16.BlocksName(), "group of 128");
  EXPECT_FALSE(w4a16.column_groups);
  EXPECT_TRUE(Parse(Compressed("pack-quantized", {{"num_bits", 4},
                                                  {"strategy", "group"},
                                                  {"group_size", 128},
                                                  {"actorder", "group"}}))
                  .column_groups);

  const WeightQuantization asym = Parse(Compressed(
      "pack-quantized",
      {{"num_bits", 4}, {"strategy", "group"}, {"group_size", 32}, {"symmetric", false}}));
  EXPECT_FALSE(asym.symmetric);
  EXPECT_EQ(asym.CodesName(), "int4 with zero points");

  const WeightQuantization w8a16 = Parse(Compressed("pack-quantized", {{"strategy", "channel"}}));
  EXPECT_EQ(w8a16.bits, 8);
  EXPECT_TRUE(w8a16.packed());

  const WeightQuantization tensor = Parse(Compressed("naive-quantized", {{"strategy", "tensor"}}));
  EXPECT_EQ(tensor.BlocksName(), "tensor");
  EXPECT_EQ(tensor.block_rows, 0);

  // No strategy: a group size makes it group-wise, as compressed-tensors infers.
  json inferred = Compressed("pack-quantized", {{"num_bits", 4}, {"group_size", 64}});
  inferred["config_groups"]["group_0"]["weights"].erase("strategy");
  EXPECT_EQ(Parse(inferred).BlocksName(), "group of 64");

  // A group's own format (mixed-precision) wins over the top-level one; a group without
  // weights (a KV-cache scheme, say) is skipped.
  json mixed =
      Compressed("mixed-precision", {{"num_bits", 4}, {"strategy", "group"}, {"group_size", 32}});
  mixed["config_groups"]["group_0"]["format"] = "pack-quantized";
  mixed["config_groups"]["group_1"] = {{"targets", {"re:.*k_proj"}}, {"weights", nullptr}};
  EXPECT_EQ(Parse(mixed).bits, 4);
}

// AutoAWQ's quantization_config, in both spellings, and what qvl does not read of it.
TEST(WeightQuantization, ReadsAutoAwq) {
  const WeightQuantization q = Parse({{"quant_method", "awq"},
                                      {"bits", 4},
                                      {"group_size", 128},
                                      {"zero_point", true},
                                      {"version", "gemm"},
                                      {"modules_to_not_convert", {"visual"}}});
  EXPECT_EQ(q.method, Method::kAwq);
  EXPECT_EQ(q.MethodName(), "awq");
  EXPECT_TRUE(q.packed());
  EXPECT_FALSE(q.symmetric);
  EXPECT_EQ(q.BlocksName(), "group of 128");
  EXPECT_EQ(q.CodesName(), "int4 with zero points");
  const WeightQuantization old =
      Parse({{"quant_method", "awq"}, {"w_bit", 4}, {"q_group_size", -1}, {"version", "GEMM"}});
  EXPECT_EQ(old.BlocksName(), "channel");

  EXPECT_EQ(ErrorOf({{"quant_method", "awq"}, {"bits", 8}, {"group_size", 128}}),
            "m/config.json: quantization_config.bits is 8; qvl reads 4-bit AWQ weights");
  EXPECT_EQ(
      ErrorOf({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"version", "exllama"}}),
      "m/config.json: quantization_config.version is \"exllama\"; qvl reads AWQ weights "
      "packed for the \"gemm\" kernels");
  EXPECT_EQ(
      ErrorOf({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"zero_point", false}}),
      "m/config.json: quantization_config.zero_point is false; qvl reads AWQ weights with "
      "zero points");
  EXPECT_EQ(ErrorOf({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 0}}),
            "m/config.json: quantization_config.group_size is 0; it must be positive, or -1 for "
            "whole columns");
  EXPECT_EQ(ErrorOf({{"quant_method", "awq"}, {"bits", 4}}),
            "m/config.json: quantization_config.group_size is missing");
}

// transformers' BitsAndBytesConfig as unsloth's -bnb-4bit checkpoints carry it, 8-bit,
// and what qvl does not read of it.
TEST(WeightQuantization, ReadsBitsAndBytes) {
  const json nf4 = {{"quant_method", "bitsandbytes"},
                    {"_load_in_4bit", true},
                    {"_load_in_8bit", false},
                    {"bnb_4bit_compute_dtype", "bfloat16"},
                    {"bnb_4bit_quant_storage", "uint8"},
                    {"bnb_4bit_quant_type", "nf4"},
                    {"bnb_4bit_use_double_quant", true},
                    {"llm_int8_skip_modules", {"lm_head", "visual"}},
                    {"llm_int8_threshold", 6.0},
                    {"load_in_4bit", true},
                    {"load_in_8bit", false}};
  const WeightQuantization q = Parse(nf4);
  EXPECT_EQ(q.method, Method::kBitsAndBytes);
  EXPECT_EQ(q.MethodName(), "bitsandbytes");
  EXPECT_EQ(q.codes, DType::kU8);
  EXPECT_EQ(q.bits, 4);
  EXPECT_EQ(q.CodesName(), "nf4");
  EXPECT_EQ(q.BlocksName(), "block");
  // bitsandbytes' default type is fp4; older files spell only the underscored flags.
  EXPECT_EQ(Parse({{"quant_method", "bitsandbytes"}, {"_load_in_4bit", true}}).CodesName(), "fp4");
  const WeightQuantization int8 = Parse({{"quant_method", "bitsandbytes"}, {"load_in_8bit", true}});
  EXPECT_EQ(int8.codes, DType::kI8);
  EXPECT_EQ(int8.CodesName(), "int8");
  EXPECT_EQ(int8.BlocksName(), "channel");

  EXPECT_EQ(ErrorOf({{"quant_method", "bitsandbytes"}, {"load_in_4bit", false}}),
            "m/config.json: quantization_config.load_in_4bit and load_in_8bit are both false; qvl "
            "reads bitsandbytes weights stored in 4 or 8 bits");
  json other = nf4;
  other["bnb_4bit_quant_type"] = "int4";
  EXPECT_EQ(ErrorOf(other),
            "m/config.json: quantization_config.bnb_4bit_quant_type is \"int4\"; qvl reads 4-bit "
            "bitsandbytes weights as \"nf4\" or \"fp4\"");
  other = nf4;
  other["bnb_4bit_quant_storage"] = "bfloat16";
  EXPECT_EQ(ErrorOf(other),
            "m/config.json: quantization_config.bnb_4bit_quant_storage is \"bfloat16\"; qvl reads "
            "4-bit codes stored as \"uint8\"");
}

// GPTQModel's and AutoGPTQ's quantization_config, in the v1 and v2 formats, and what
// qvl does not read of it.
TEST(WeightQuantization, ReadsGptq) {
  const json v1 = {{"quant_method", "gptq"},
                   {"bits", 4},
                   {"group_size", 128},
                   {"desc_act", true},
                   {"sym", true},
                   {"checkpoint_format", "gptq"},
                   {"damp_percent", 0.01},
                   {"true_sequential", true},
                   {"static_groups", false},
                   {"pack_dtype", "int32"},
                   {"dynamic", json::object()},
                   {"meta", {{"quantizer", {"gptqmodel:4.0"}}}}};
  const WeightQuantization q = Parse(v1);
  EXPECT_EQ(q.method, Method::kGptq);
  EXPECT_EQ(q.MethodName(), "gptq");
  EXPECT_TRUE(q.packed());
  EXPECT_TRUE(q.column_groups);
  EXPECT_TRUE(q.zeros_minus_one);
  EXPECT_EQ(q.CodesName(), "int4 with zero points");
  EXPECT_EQ(q.BlocksName(), "group of 128");
  const WeightQuantization v2 =
      Parse({{"quant_method", "gptq"}, {"bits", 8}, {"group_size", -1}, {"format", "gptq_v2"}});
  EXPECT_FALSE(v2.zeros_minus_one);
  EXPECT_EQ(v2.CodesName(), "int8 with zero points");
  EXPECT_EQ(v2.BlocksName(), "channel");

  json other = v1;
  other["bits"] = 3;
  EXPECT_EQ(ErrorOf(other),
            "m/config.json: quantization_config.bits is 3; qvl reads GPTQ weights of 2, 4 or 8 "
            "bits");
  other = v1;
  other["checkpoint_format"] = "marlin";
  EXPECT_EQ(ErrorOf(other),
            "m/config.json: quantization_config.checkpoint_format is \"marlin\"; qvl reads GPTQ "
            "weights in the \"gptq\" and \"gptq_v2\" layouts");
  other = v1;
  other["dynamic"] = {{"-:.*visual.*", json::object()}};
  EXPECT_EQ(ErrorOf(other),
            "m/config.json: quantization_config.dynamic quantizes some modules differently; qvl "
            "reads one scheme for all of them");
  other = v1;
  other["group_size"] = 0;
  EXPECT_EQ(ErrorOf(other),
            "m/config.json: quantization_config.group_size is 0; it must be positive, or -1 for "
            "whole rows");
}

TEST(WeightQuantization, RefusesWhatItCannotDecode) {
  EXPECT_EQ(ErrorOf({{"quant_method", "exl2"}, {"bits", 4}}),
            "m/config.json: quantization_config.quant_method is \"exl2\", which qvl does not "
            "read: it reads unquantized checkpoints (BF16, F16, F32), which it quantizes itself "
            "(--dtype q8, q4, w8a8), block-wise fp8 ones (\"fp8\", as in Qwen's -FP8 releases), "
            "llm-compressor's (\"compressed-tensors\": fp8, int8, or packed int4/int8 weights), "
            "AutoAWQ's (\"awq\", 4-bit \"gemm\"), bitsandbytes' (\"bitsandbytes\": nf4, "
            "fp4 or int8 weights) and GPTQ's (\"gptq\": 2, 4 or 8 bits)");
  EXPECT_EQ(ErrorOf({{"bits", 4}}), "m/config.json: quantization_config.quant_method is missing");
  EXPECT_EQ(ErrorOf(Compressed("nvfp4-pack-quantized", {{"type", "float"}, {"num_bits", 4}})),
            "m/config.json: quantization_config.format is \"nvfp4-pack-quantized\"; qvl reads "
            "compressed-tensors checkpoints in the formats float-quantized, int-quantized, "
            "naive-quantized and pack-quantized");
  json sparse = Compressed("int-quantized", json::object());
  sparse["sparsity_config"] = {{"format", "sparse-24-bitmask"}, {"sparsity_structure", "2:4"}};
  EXPECT_EQ(ErrorOf(sparse),
            "m/config.json: quantization_config.sparsity_config.format is \"sparse-24-bitmask\"; "
            "qvl reads dense weights, not sparse ones");
  json two =
      Compressed("pack-quantized", {{"num_bits", 4}, {"strategy", "group"}, {"group_size", 128}});
  two["config_groups"]["group_1"] = two["config_groups"]["group_0"];
  two["config_groups"]["group_1"]["weights"]["num_bits"] = 8;
  EXPECT_EQ(ErrorOf(two),
            "m/config.json: quantization_config.config_groups quantize the weights of different "
            "layers differently; qvl reads one scheme for all of them");
  json none = Compressed("int-quantized", json::object());
  none["config_groups"]["group_0"].erase("weights");
  EXPECT_EQ(ErrorOf(none),
            "m/config.json: quantization_config.config_groups has no group with quantized weights");
  EXPECT_EQ(ErrorOf(Compressed("pack-quantized", {{"num_bits", 2}})),
            "m/config.json: quantization_config.config_groups.group_0.weights.num_bits is 2 with "
            "type \"int\"; qvl reads pack-quantized weights of 4 or 8 bits, type \"int\"");
  EXPECT_EQ(ErrorOf(Compressed("float-quantized", {{"type", "int"}})),
            "m/config.json: quantization_config.config_groups.group_0.weights.num_bits is 8 with "
            "type \"int\"; qvl reads float-quantized weights as fp8 e4m3 (8 bits, type \"float\")");
  EXPECT_EQ(ErrorOf(Compressed("float-quantized", {{"type", "float"}, {"symmetric", false}})),
            "m/config.json: quantization_config.config_groups.group_0.weights.symmetric is false; "
            "qvl reads zero points only for int weights per channel or group");
  EXPECT_EQ(ErrorOf(Compressed("int-quantized", {{"strategy", "token"}})),
            "m/config.json: quantization_config.config_groups.group_0.weights.strategy is "
            "\"token\"; qvl reads weights quantized per tensor, channel, group or block");
  EXPECT_EQ(ErrorOf(Compressed("int-quantized", {{"strategy", "group"}})),
            "m/config.json: quantization_config.config_groups.group_0.weights.group_size is "
            "missing; the group strategy needs it");
  EXPECT_EQ(ErrorOf(Compressed("pack-quantized",
                               {{"num_bits", 4}, {"strategy", "channel"}, {"actorder", "group"}})),
            "m/config.json: quantization_config.config_groups.group_0.weights.actorder is "
            "\"group\" with strategy \"channel\"; a column order needs groups");
  EXPECT_EQ(ErrorOf(Compressed("int-quantized", {{"dynamic", true}})),
            "m/config.json: quantization_config.config_groups.group_0.weights.dynamic is true; "
            "qvl reads weights stored quantized, not quantized on the fly");
}

}  // namespace
}  // namespace qvl
