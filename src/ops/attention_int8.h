// The int8 (SageAttention-style) path of SegmentedFullAttention, internal to ops/ (the
// public entry is SegmentedFullAttention with DType::kI8; see ops/attention.h).
//
// Per segment (image) and head, keys are smoothed by subtracting their mean over the
// segment (softmax ignores a per-query constant, and q . mean is one) and quantized to
// int8 per token; values lose their per-channel mean (added back at the end, since the
// probabilities sum to 1) and are quantized per channel; queries are quantized per row.
// Queries and keys are first rotated by a 16x16 Hadamard matrix per block of 16 dims,
// which spreads outlier channels (the dot products stay the same): without it Q K^T's
// int8 rounding dominated the error.
// Q K^T runs on vpdpbusd (vpmaddwd on AVX2) with exact int32 sums, the online softmax in
// f32 (base 2, the scales folded in), and P V again on integer products with the
// probabilities as bytes scaled to each row's maximum within a key block.
#pragma once

#include <cstdint>
#include <span>

#include "base/thread_pool.h"

namespace qvl {

// Whether the active kernel tier has int8 attention kernels (every x86 tier: vpmaddwd on
// AVX2, vpdpbusd with VNNI, or the scalar tier's twins); callers use bf16 attention
// otherwise.
bool Int8AttentionAvailable();

// SegmentedFullAttention's int8 path: same arguments and layouts, head_dim <= 256.
void SegmentedFullAttentionInt8(const float* q, const float* k, const float* v, int64_t stride,
                                std::span<const int64_t> segments, int heads, int head_dim,
                                float scale, float* out, int64_t out_stride, ThreadPool& pool);

// Frees the calling thread's packed int8 keys and values.
void ReleaseInt8AttentionScratch();

}  // namespace qvl
