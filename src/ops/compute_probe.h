// A quick measurement of the active kernel tier's peak multiply-add rate, the bound of
// prefill and vision speed (as the bandwidth probe is decode's): every thread of a pool
// runs a register-only loop of the tier's widest int8 and bf16 instructions (AMX tile
// products on the amx tier, vpdpbusd / vdpbf16ps on avx512bf16; on avx2 the kernels'
// vpmaddubsw + vpmaddwd pair, and vfmadd on the f32 that bf16 is widened to).
#pragma once

#include "base/thread_pool.h"

namespace qvl {

struct ComputeProbe {
  const char* unit = "";   // what ran: "amx tiles", "avx512 vnni", "avx2", or "" (none)
  double int8_tops = 0;    // 1e12 int8 operations (a multiply-add is two) per second
  double bf16_tflops = 0;  // 1e12 bf16 operations per second
};

// About 50 ms with all threads of `pool`. The scalar and NEON tiers, which have no probe
// loops, return unit "".
ComputeProbe MeasureComputePeak(ThreadPool& pool);

}  // namespace qvl
