// AMX tile configuration for the kernels compiled with -mamx-* (internal to ops/).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace qvl::kernels::amx {

// The 64-byte operand of ldtilecfg (palette 1): rows and bytes per row of each tile.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
  void Set(int tile, int tile_rows, int bytes) {
    rows[tile] = static_cast<uint8_t>(tile_rows);
    colsb[tile] = static_cast<uint16_t>(bytes);
  }
};

// Makes `config` the calling thread's tile configuration. A thread configures its tiles
// before its first tile instruction; ldtilecfg also zeroes every tile and costs about as
// much as a small tile product, so it runs only when the configuration changes. Tiles are
// never released: the kernel then saves a thread's 8 KiB of tile state on a switch.
inline void UseTiles(const TileConfig& config) {
  thread_local TileConfig loaded;
  thread_local bool valid = false;
  if (valid && std::memcmp(&loaded, &config, sizeof(config)) == 0) return;
  _tile_loadconfig(&config);
  loaded = config;
  valid = true;
}

}  // namespace qvl::kernels::amx
