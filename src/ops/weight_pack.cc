#include "ops/weight_pack.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/bf16.h"
#include "base/error.h"
#include "ops/weight_pack_internal.h"

namespace qvl {
namespace {

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

void PackBf16Panel(const WeightView& view, int64_t panel, int64_t padded_k, uint8_t* dst) {
  uint16_t* out = reinterpret_cast<uint16_t*>(dst);
  const float* rows = pack::ReadPanel(view, panel, padded_k);
  for (int64_t r = 0; r < kPanelRows; ++r) {
    const float* row = rows + r * padded_k;
    for (int64_t k = 0; k < padded_k; ++k) {
      out[(k / 2) * 2 * kPanelRows + r * 2 + (k & 1)] = F32ToBf16(row[k]);
    }
  }
}

}  // namespace

const char* WeightFormatName(WeightFormat format) {
  switch (format) {
    case WeightFormat::kF32:
      return "f32";
    case WeightFormat::kBF16:
      return "bf16";
    case WeightFormat::kBF16Packed:
      return "bf16-packed";
    case WeightFormat::kQ8:
      return "q8";
    case WeightFormat::kQ4:
      return "q4";
    case WeightFormat::kW8A8:
      return "w8a8";
  }
  return "?";
}

bool ParseWeightFormat(const char* name, WeightFormat* out) {
  for (WeightFormat f : {WeightFormat::kF32, WeightFormat::kBF16, WeightFormat::kBF16Packed,
                         WeightFormat::kQ8, WeightFormat::kQ4, WeightFormat::kW8A8}) {
    if (std::strcmp(name, WeightFormatName(f)) == 0) {
      *out = f;
      return true;
    }
  }
  return false;
}

bool IsPacked(WeightFormat format) {
  return format == WeightFormat::kBF16Packed || format == WeightFormat::kQ8 ||
         format == WeightFormat::kQ4 || format == WeightFormat::kW8A8;
}

PackedLayout PackedLayoutFor(WeightFormat format, int64_t rows, int64_t cols) {
  PackedLayout l;
  l.panels = (rows + kPanelRows - 1) / kPanelRows;
  switch (format) {
    case WeightFormat::kBF16Packed:
      l.padded_k = RoundUp(cols, 32);
      l.panel_bytes = kPanelRows * l.padded_k * 2;
      break;
    case WeightFormat::kQ8:
      l.padded_k = RoundUp(cols, 64);
      l.panel_bytes = l.padded_k / 64 * pack::kQ8GroupBytes;
      break;
    case WeightFormat::kQ4:
      l.padded_k = RoundUp(cols, 64);
      l.panel_bytes = l.padded_k / 64 * pack::kQ4GroupBytes;
      break;
    case WeightFormat::kW8A8:
      l.padded_k = RoundUp(cols, 64);
      l.panel_bytes = l.padded_k * kPanelRows + kPanelRows * 4;
      break;
    default:
      Fail(ErrorCode::kInvalidArgument, "weight format ", WeightFormatName(format),
           " is not a packed format");
  }
  return l;
}

namespace pack {
namespace {

// The first n values of row `row` as float; zeros past the matrix (padding).
void ReadRow(const WeightView& view, int64_t row, int64_t n, float* out) {
  const int64_t valid = row < view.rows ? std::min(view.cols, n) : 0;
  DecodeWeightRow(view, row, valid, out);
  std::fill(out + valid, out + n, 0.0f);
}

template <uint16_t (*kQuantizeBlock)(const float*, uint8_t*)>
void QuantizePanelBlockScalar(const float* rows, int64_t ld, uint16_t* scales, uint8_t* codes) {
  for (int r = 0; r < kPanelRows; ++r) {
    scales[r] = kQuantizeBlock(rows + r * ld, codes + r * kQuantBlock);
  }
}

}  // namespace

PanelBlockQuantizers ScalarPanelBlockQuantizers() {
  return {QuantizePanelBlockScalar<QuantizeQ8Block>, QuantizePanelBlockScalar<QuantizeQ4Block>};
}

PanelBlockQuantizers PanelBlockQuantizersFor(CpuTier tier) {
#if defined(__x86_64__)
  switch (tier) {
    case CpuTier::kAmx:
    case CpuTier::kAvx512Bf16:
    case CpuTier::kAvx512Vnni:
    case CpuTier::kAvx512:
      return Avx512PanelBlockQuantizers();
    case CpuTier::kAvxVnni:
    case CpuTier::kAvx2:
      return Avx2PanelBlockQuantizers();
    default:
      break;
  }
#endif
  (void)tier;
  return ScalarPanelBlockQuantizers();
}

const PanelBlockQuantizers& ActivePanelBlockQuantizers() {
  static const PanelBlockQuantizers quantizers = PanelBlockQuantizersFor(ActiveTier());
  return quantizers;
}

float* ReadPanel(const WeightView& view, int64_t panel, int64_t padded_k) {
  thread_local std::vector<float> rows;
  rows.resize(kPanelRows * padded_k);
  for (int64_t r = 0; r < kPanelRows; ++r) {
    ReadRow(view, panel * kPanelRows + r, padded_k, rows.data() + r * padded_k);
  }
  return rows.data();
}

}  // namespace pack

void PackPanels(const WeightView& view, WeightFormat format, int64_t first, int64_t last,
                uint8_t* dst) {
  const PackedLayout l = PackedLayoutFor(format, view.rows, view.cols);
  for (int64_t p = first; p < last; ++p) {
    uint8_t* out = dst + (p - first) * l.panel_bytes;
    switch (format) {
      case WeightFormat::kBF16Packed:
        PackBf16Panel(view, p, l.padded_k, out);
        break;
      case WeightFormat::kQ8:
        pack::PackQ8Panel(view, p, l.padded_k, out);
        break;
      case WeightFormat::kW8A8:
        pack::PackW8A8Panel(view, p, l.padded_k, out);
        break;
      default:
        pack::PackQ4Panel(view, p, l.padded_k, out);
        break;
    }
  }
}

void UnpackRow(const uint8_t* packed, WeightFormat format, int64_t rows, int64_t cols, int64_t row,
               float* out) {
  const PackedLayout l = PackedLayoutFor(format, rows, cols);
  const uint8_t* panel = packed + (row / kPanelRows) * l.panel_bytes;
  const int64_t r = row % kPanelRows;
  switch (format) {
    case WeightFormat::kBF16Packed: {
      const uint16_t* p = reinterpret_cast<const uint16_t*>(panel);
      for (int64_t k = 0; k < cols; ++k) {
        out[k] = Bf16ToF32(p[(k / 2) * 2 * kPanelRows + r * 2 + (k & 1)]);
      }
      break;
    }
    case WeightFormat::kQ8:
      pack::UnpackQ8Row(panel, r, cols, out);
      break;
    case WeightFormat::kW8A8:
      pack::UnpackW8A8Row(panel, r, cols, l.padded_k, out);
      break;
    default:
      pack::UnpackQ4Row(panel, r, cols, out);
      break;
  }
}

}  // namespace qvl
