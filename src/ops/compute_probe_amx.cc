// The compute probe's AMX loops: four independent accumulator tiles, full-depth
// operands (16 x 64 bytes), no loads in the loop.
#include <immintrin.h>

#include "ops/amx_tiles.h"
#include "ops/compute_probe_kernels.h"

namespace qvl::kernels {
namespace {

alignas(64) uint8_t kOperand[16 * 64] = {1};

void LoadOperands() {
  amx::TileConfig c;
  for (int t = 0; t < 8; ++t) c.Set(t, 16, 64);
  amx::UseTiles(c);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, kOperand, 64);
  _tile_loadd(5, kOperand, 64);
  _tile_loadd(6, kOperand, 64);
  _tile_loadd(7, kOperand, 64);
}

// Operations of one 16 x 16 x 64-byte tile product (a multiply-add counts two).
constexpr double kInt8Ops = 2.0 * 16 * 16 * 64, kBf16Ops = 2.0 * 16 * 16 * 32;

// `reps` calls of step(), which issues four tile products; returns the operations done.
template <typename Step>
double TileLoop(int64_t reps, double ops_per_product, const Step& step) {
  LoadOperands();
  for (int64_t i = 0; i < reps; ++i) step();
  return 4 * ops_per_product * static_cast<double>(reps);
}

}  // namespace

double AmxInt8Loop(int64_t reps) {
  return TileLoop(reps, kInt8Ops, [] {
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    _tile_dpbusd(2, 5, 6);
    _tile_dpbusd(3, 5, 7);
  });
}

double AmxBf16Loop(int64_t reps) {
  return TileLoop(reps, kBf16Ops, [] {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  });
}

}  // namespace qvl::kernels
