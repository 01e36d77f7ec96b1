#include "share/shared_cache_counters.h"

#include "base/error.h"

namespace qvl {
namespace {

// Prometheus' two comment lines that introduce the counter `name`.
void Introduce(std::string* out, const char* name, const char* help) {
  *out += StrCat("# HELP ", name, " ", help, "\n# TYPE ", name, " counter\n");
}

// Each counter's name, help line and member, in the order /metrics lists them.
struct CounterRow {
  const char* name;
  const char* help;
  std::atomic<int64_t> SharedCacheCounters::*member;
};
constexpr CounterRow kCounters[] = {
    {"qvl_shared_cache_image_hits_total",
     "Vision encodings taken from the shared cache instead of the vision tower",
     &SharedCacheCounters::image_hits},
    {"qvl_shared_cache_image_misses_total",
     "Vision encodings looked up in the shared cache and not found",
     &SharedCacheCounters::image_misses},
    {"qvl_shared_cache_image_stores_total", "Vision encodings written to the shared cache",
     &SharedCacheCounters::image_stores},
    {"qvl_shared_cache_image_dropped_total",
     "Vision encodings not written to the shared cache (writer behind or Redis failing)",
     &SharedCacheCounters::image_dropped},
    {"qvl_shared_cache_image_rejected_total",
     "Shared-cache encodings refused: other format version, bad checksum or shape",
     &SharedCacheCounters::image_rejected},
    {"qvl_shared_cache_answer_hits_total",
     "Deterministic requests answered from the shared answer cache",
     &SharedCacheCounters::answer_hits},
    {"qvl_shared_cache_answer_misses_total",
     "Deterministic requests looked up in the shared answer cache and not found",
     &SharedCacheCounters::answer_misses},
    {"qvl_shared_cache_answer_stores_total", "Answers written to the shared answer cache",
     &SharedCacheCounters::answer_stores},
    {"qvl_shared_cache_answer_dropped_total",
     "Answers not written to the shared answer cache (writer behind or Redis failing)",
     &SharedCacheCounters::answer_dropped},
    {"qvl_shared_cache_answer_rejected_total",
     "Shared-cache answers refused: other format version or bad checksum",
     &SharedCacheCounters::answer_rejected},
    {"qvl_shared_cache_response_hits_total",
     "Stored responses (previous_response_id, GET) found in the shared cache",
     &SharedCacheCounters::response_hits},
    {"qvl_shared_cache_response_misses_total",
     "Stored responses looked up in the shared cache and not found",
     &SharedCacheCounters::response_misses},
    {"qvl_shared_cache_response_stores_total", "Stored responses written to the shared cache",
     &SharedCacheCounters::response_stores},
    {"qvl_shared_cache_response_dropped_total",
     "Stored responses not written to the shared cache (writer behind or Redis failing)",
     &SharedCacheCounters::response_dropped},
    {"qvl_shared_cache_response_rejected_total",
     "Shared-cache responses refused: other key, format version or bad checksum",
     &SharedCacheCounters::response_rejected},
};

}  // namespace

void RenderSharedCacheCounters(const SharedCacheCounters& c, std::string* out) {
  const char* faults = "qvl_shared_cache_faults_total";
  Introduce(out, faults,
            "Redis commands that got no answer (the request went on without the shared cache)");
  for (int k = 0; k < static_cast<int>(RedisFault::kCount); ++k) {
    const RedisFault fault = static_cast<RedisFault>(k);
    *out += StrCat(faults, "{kind=\"", RedisFaultName(fault), "\"} ", c.faults.Get(fault), "\n");
  }
  for (const CounterRow& row : kCounters) {
    Introduce(out, row.name, row.help);
    *out += StrCat(row.name, " ", (c.*row.member).load(), "\n");
  }
}

}  // namespace qvl
