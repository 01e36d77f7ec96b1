#include "share/shared_cache_counters.h"

#include "base/error.h"

namespace qvl {
namespace {

void Counter(std::string* out, const char* name, const char* help, int64_t value) {
  *out +=
      StrCat("# HELP ", name, " ", help, "\n# TYPE ", name, " counter\n", name, " ", value, "\n");
}

}  // namespace

void RenderSharedCacheCounters(const SharedCacheCounters& c, std::string* out) {
  const char* faults = "qvl_shared_cache_faults_total";
  *out += StrCat("# HELP ", faults,
                 " Redis commands that got no answer (the request went on without the shared "
                 "cache)\n# TYPE ",
                 faults, " counter\n");
  for (int k = 0; k < static_cast<int>(RedisFault::kCount); ++k) {
    const RedisFault fault = static_cast<RedisFault>(k);
    *out += StrCat(faults, "{kind=\"", RedisFaultName(fault), "\"} ", c.faults.Get(fault), "\n");
  }
  Counter(out, "qvl_shared_cache_image_hits_total",
          "Vision encodings taken from the shared cache instead of the vision tower",
          c.image_hits.load());
  Counter(out, "qvl_shared_cache_image_misses_total",
          "Vision encodings looked up in the shared cache and not found", c.image_misses.load());
  Counter(out, "qvl_shared_cache_image_stores_total",
          "Vision encodings written to the shared cache", c.image_stores.load());
  Counter(out, "qvl_shared_cache_image_dropped_total",
          "Vision encodings not written to the shared cache (writer behind or Redis failing)",
          c.image_dropped.load());
  Counter(out, "qvl_shared_cache_image_rejected_total",
          "Shared-cache encodings refused: other format version, bad checksum or shape",
          c.image_rejected.load());
  Counter(out, "qvl_shared_cache_answer_hits_total",
          "Deterministic requests answered from the shared answer cache", c.answer_hits.load());
  Counter(out, "qvl_shared_cache_answer_misses_total",
          "Deterministic requests looked up in the shared answer cache and not found",
          c.answer_misses.load());
  Counter(out, "qvl_shared_cache_answer_stores_total", "Answers written to the shared answer cache",
          c.answer_stores.load());
  Counter(out, "qvl_shared_cache_answer_dropped_total",
          "Answers not written to the shared answer cache (writer behind or Redis failing)",
          c.answer_dropped.load());
  Counter(out, "qvl_shared_cache_answer_rejected_total",
          "Shared-cache answers refused: other format version or bad checksum",
          c.answer_rejected.load());
  Counter(out, "qvl_shared_cache_response_hits_total",
          "Stored responses (previous_response_id, GET) found in the shared cache",
          c.response_hits.load());
  Counter(out, "qvl_shared_cache_response_misses_total",
          "Stored responses looked up in the shared cache and not found", c.response_misses.load());
  Counter(out, "qvl_shared_cache_response_stores_total",
          "Stored responses written to the shared cache", c.response_stores.load());
  Counter(out, "qvl_shared_cache_response_dropped_total",
          "Stored responses not written to the shared cache (writer behind or Redis failing)",
          c.response_dropped.load());
  Counter(out, "qvl_shared_cache_response_rejected_total",
          "Shared-cache responses refused: other key, format version or bad checksum",
          c.response_rejected.load());
}

}  // namespace qvl
