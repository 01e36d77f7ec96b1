// QuantizeQ8Block and QuantizeQ4Block written once over a tier's lane policy L, one block
// per lane: the 16 rows of a panel are quantized together, every lane taking the scalar
// steps of quant_q8.cc and quant_q4.cc in the same order with the same roundings, so all
// tiers pack the same bytes. Include from a tier's file only, after its policy, in a file
// built with -ffp-contract=off (a fused multiply-add would round differently from the
// scalar steps).
//
// L has kLanes; F (float lanes) and M (lane masks); Load, Set, Add, Sub, Mul, Div, Min,
// Max, Abs, Store; Greater, Less, LessEqual (ordered compares), And, Or, Not,
// Select(m, yes, no); Grid(v, p): round_to_even(v) + 128 stored to p as int32 lanes;
// LevelValues(p): kNearestValue of each lane's grid point at p; RoundToHalf(v): v rounded
// to float16 and back; StoreHalves(p, v): the float16 bits of v (exact halves). A tier's
// policy takes kLanes and the arithmetic from its Simd<T> (ops/simd.h).
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>

#include "ops/quant_q4.h"
#include "ops/weight_format.h"
#include "ops/weight_pack_internal.h"

namespace qvl::pack {
namespace {

// The 8 interleaved partial sums of Sum32 (quant_q4.cc) per lane, added in its order.
template <class L>
struct Sum32Lanes {
  typename L::F partial[8];
  Sum32Lanes() {
    for (auto& p : partial) p = L::Set(0.0f);
  }
  void Add(int i, typename L::F v) { partial[i % 8] = L::Add(partial[i % 8], v); }
  typename L::F Total() const {
    return L::Add(L::Add(L::Add(partial[0], partial[1]), L::Add(partial[2], partial[3])),
                  L::Add(L::Add(partial[4], partial[5]), L::Add(partial[6], partial[7])));
  }
};

// Grid points of w[i] (one row per lane) for the lanes' scales d, as GridPoints does.
// Lanes whose d is 0, NaN or infinite get points in [0, 256) too (their result is unused).
template <class L>
void GridLanes(const typename L::F (&w)[kQuantBlock], typename L::F d,
               int32_t (&grid)[kQuantBlock][L::kLanes]) {
  const typename L::F inv = L::Div(L::Set(1.0f), d);
  const typename L::F lo = L::Set(-128.0f), hi = L::Set(127.0f);
  // min before max: vminps returns its second operand, 127, for a NaN product.
  for (int i = 0; i < kQuantBlock; ++i) L::Grid(L::Max(L::Min(L::Mul(w[i], inv), hi), lo), grid[i]);
}

// Value i of rows r0 .. r0 + kLanes - 1 in w[i].
template <class L>
void LoadLanes(const float* rows, int64_t ld, int r0, typename L::F (&w)[kQuantBlock]) {
  alignas(64) float column[L::kLanes];
  for (int i = 0; i < kQuantBlock; ++i) {
    for (int l = 0; l < L::kLanes; ++l) column[l] = rows[(r0 + l) * ld + i];
    w[i] = L::Load(column);
  }
}

// QuantizeQ8Block on rows r0 .. r0 + kLanes - 1 of the panel block (see
// QuantizePanelBlockFn).
template <class L>
void QuantizeQ8Lanes(const float* rows, int64_t ld, int r0, uint16_t* scales, uint8_t* codes) {
  using F = typename L::F;
  F w[kQuantBlock];
  LoadLanes<L>(rows, ld, r0, w);
  // |w| first: vmaxps returns its second operand, amax, for a NaN, as std::max does.
  F amax = L::Set(0.0f);
  for (int i = 0; i < kQuantBlock; ++i) amax = L::Max(L::Abs(w[i]), amax);
  const F d = L::RoundToHalf(L::Div(amax, L::Set(127.0f)));
  L::StoreHalves(scales + r0, d);
  const typename L::M positive = L::Greater(d, L::Set(0.0f));
  const F magic = L::Set(kRoundToEvenMagic), lo = L::Set(-127.0f), hi = L::Set(127.0f);
  int32_t grid[kQuantBlock][L::kLanes];
  for (int i = 0; i < kQuantBlock; ++i) {
    const F q = L::Sub(L::Add(L::Div(w[i], d), magic), magic);  // pack::RoundToEven
    // std::clamp by compares, so a NaN stays NaN (and becomes the code 128 as there).
    const F clamped = L::Select(L::Less(q, lo), lo, L::Select(L::Less(hi, q), hi, q));
    L::Grid(L::Select(positive, clamped, L::Set(0.0f)), grid[i]);
  }
  for (int l = 0; l < L::kLanes; ++l) {
    for (int i = 0; i < kQuantBlock; ++i) {
      codes[(r0 + l) * kQuantBlock + i] = static_cast<uint8_t>(grid[i][l]);
    }
  }
}

// QuantizeQ4Block on rows r0 .. r0 + kLanes - 1 of the panel block.
template <class L>
void QuantizeQ4Lanes(const float* rows, int64_t ld, int r0, uint16_t* scales, uint8_t* codes) {
  using F = typename L::F;
  using M = typename L::M;
  constexpr int kLanes = L::kLanes;
  F w[kQuantBlock];
  LoadLanes<L>(rows, ld, r0, w);
  F extreme = L::Set(0.0f);
  M finite = L::LessEqual(extreme, extreme);  // every lane
  Sum32Lanes<L> energy;
  for (int i = 0; i < kQuantBlock; ++i) {
    finite = L::And(finite, L::LessEqual(L::Abs(w[i]), L::Set(FLT_MAX)));
    extreme = L::Select(L::Greater(L::Abs(w[i]), L::Abs(extreme)), w[i], extreme);
    energy.Add(i, L::Mul(w[i], w[i]));
  }
  const M zero = L::Or(L::Not(L::Greater(L::Abs(extreme), L::Set(1e-30f))), L::Not(finite));
  const F total = energy.Total();

  int32_t grid[kQuantBlock][kLanes];
  F best_err = L::Set(INFINITY), best_d = L::Set(0.0f);
  for (const int end : kQ4Ends) {
    for (int s = 0; s < kShrinkSteps; ++s) {
      const F d0 = L::Mul(L::Div(extreme, L::Set(static_cast<float>(kQ4Levels[end]))),
                          L::Set(kShrinkFactors[s]));
      GridLanes<L>(w, d0, grid);
      Sum32Lanes<L> wl_sum, ll_sum;
      for (int i = 0; i < kQuantBlock; ++i) {
        const F level = L::LevelValues(grid[i]);
        wl_sum.Add(i, L::Mul(w[i], level));
        ll_sum.Add(i, L::Mul(level, level));
      }
      const F wl = wl_sum.Total(), ll = ll_sum.Total();
      const F d = L::RoundToHalf(L::Div(wl, ll));
      // err = sum w^2 - 2 d sum w l + d^2 sum l^2, over scales a float16 holds (> 0).
      const F err =
          L::Add(L::Sub(total, L::Mul(L::Mul(L::Set(2.0f), d), wl)), L::Mul(L::Mul(d, d), ll));
      const M usable =
          L::And(L::Greater(L::Abs(d), L::Set(0.0f)), L::LessEqual(L::Abs(d), L::Set(FLT_MAX)));
      const M better = L::And(usable, L::Less(err, best_err));
      best_err = L::Select(better, err, best_err);
      best_d = L::Select(better, d, best_d);
    }
  }
  // Lanes no scale fitted (too small for a float16) are zero blocks too.
  const M zeros = L::Or(zero, L::Not(L::Less(best_err, L::Set(INFINITY))));
  best_d = L::Select(zeros, L::Set(0.0f), best_d);
  L::StoreHalves(scales + r0, best_d);
  GridLanes<L>(w, best_d, grid);
  alignas(64) float zero_lanes[kLanes];
  L::Store(zero_lanes, L::Select(zeros, L::Set(1.0f), L::Set(0.0f)));
  for (int l = 0; l < kLanes; ++l) {
    uint8_t* c = codes + (r0 + l) * kQuantBlock;
    for (int i = 0; i < kQuantBlock; ++i) {
      c[i] = zero_lanes[l] != 0.0f ? kZeroLevel : kNearestLevel[grid[i][l]];
    }
  }
}

// A QuantizePanelBlockFn from QuantizeQ8Lanes or QuantizeQ4Lanes.
template <class L, void (*kQuantizeLanes)(const float*, int64_t, int, uint16_t*, uint8_t*)>
void QuantizePanelBlockWith(const float* rows, int64_t ld, uint16_t* scales, uint8_t* codes) {
  static_assert(kPanelRows % L::kLanes == 0);
  for (int r0 = 0; r0 < kPanelRows; r0 += L::kLanes) kQuantizeLanes(rows, ld, r0, scales, codes);
}

// A tier's Q8 and Q4 panel quantizers, over its policy L.
template <class L>
PanelBlockQuantizers LanePanelBlockQuantizers() {
  return {QuantizePanelBlockWith<L, QuantizeQ8Lanes<L>>,
          QuantizePanelBlockWith<L, QuantizeQ4Lanes<L>>};
}

}  // namespace
}  // namespace qvl::pack
