#include "model/packed_weight_cache.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <set>
#include <string_view>

#include "base/error.h"
#include "base/log.h"
#include "base/mapped_file.h"
#include "ops/weight_pack.h"

namespace qvl {
namespace {

constexpr char kMagic[8] = {'Q', 'V', 'L', 'P', 'A', 'C', 'K', '\0'};
// Bumped whenever a packed layout or the quantizers change.
constexpr uint32_t kLayoutVersion = 2;
// CheckpointKey's samples of each weight file's data.
constexpr uint64_t kSampledWindows = 256;
constexpr uint64_t kWindowBytes = 64;
constexpr uint64_t kAlign = 4096;
// Panels are packed and written in chunks of about this size, two of them in flight.
constexpr int64_t kChunkBytes = 32 << 20;

uint64_t Fnv1a(const void* data, size_t n, uint64_t h = 1469598103934665603ull) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

uint64_t AlignUp(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

template <typename T>
void Put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(v));
}

struct Placed {
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

// The header for `entries` with their data offsets; returns the data size too.
std::string EncodeHeader(uint64_t key, const std::vector<PackedWeightCache::Entry>& entries,
                         std::vector<Placed>* placed, uint64_t* total) {
  std::string body;
  for (const auto& e : entries) {
    Put<uint16_t>(body, static_cast<uint16_t>(e.name.size()));
    body += e.name;
    Put<uint8_t>(body, static_cast<uint8_t>(e.format));
    Put<int64_t>(body, e.view.rows);
    Put<int64_t>(body, e.view.cols);
  }
  std::string head(kMagic, sizeof(kMagic));
  Put<uint32_t>(head, kLayoutVersion);
  Put<uint32_t>(head, static_cast<uint32_t>(entries.size()));
  Put<uint64_t>(head, key);
  const uint64_t header_size = AlignUp(head.size() + 8 + body.size() + 8 + 8);
  uint64_t offset = header_size;
  placed->clear();
  for (const auto& e : entries) {
    const uint64_t bytes = PackedLayoutFor(e.format, e.view.rows, e.view.cols).bytes();
    placed->push_back({offset, bytes});
    offset = AlignUp(offset + bytes);
  }
  *total = offset;
  Put<uint64_t>(head, offset);  // file size
  Put<uint64_t>(head, header_size);
  head += body;
  Put<uint64_t>(head, Fnv1a(head.data(), head.size()));
  head.resize(header_size, '\0');
  return head;
}

// True when `file` is exactly the cache `expected_header` describes.
bool Matches(const MappedFile& file, const std::string& expected_header, uint64_t total) {
  return file.size() == total && file.size() >= expected_header.size() &&
         std::memcmp(file.data(), expected_header.data(), expected_header.size()) == 0;
}

void WriteAll(std::FILE* f, const void* data, size_t n, const std::string& path) {
  if (n > 0 && std::fwrite(data, 1, n, f) != n) {
    Fail(ErrorCode::kIo, "cannot write ", path, ": ", std::strerror(errno));
  }
}

// Appends to the cache file on a second thread, so the pool packs the next chunk while
// this one is written, and starts the disk's writeback of each chunk at once, so the
// closing fsync finds little left. Writes keep their order; the caller keeps each buffer
// alive and unchanged until the write after next has been queued.
class ChunkWriter {
 public:
  ChunkWriter(std::FILE* f, const std::string& path) : f_(f), path_(path) {}
  ~ChunkWriter() { Drain(); }

  void Write(const void* data, size_t n) {
    if (n == 0) return;
    Wait();
    pending_ = std::async(std::launch::async, [this, data, n] {
      WriteAll(f_, data, n, path_);
#if defined(__linux__)
      // Only a hint: the fsync at the end is what makes the file durable.
      if (std::fflush(f_) == 0) {
        ::sync_file_range(::fileno(f_), static_cast<off64_t>(offset_), static_cast<off64_t>(n),
                          SYNC_FILE_RANGE_WRITE);
      }
#endif
      offset_ += n;
    });
  }
  // Waits for the last write; rethrows its error.
  void Wait() {
    if (pending_.valid()) pending_.get();
  }
  // Waits for the last write, ignoring its error (the caller is failing already).
  void Drain() noexcept {
    if (pending_.valid()) pending_.wait();
  }

 private:
  std::FILE* f_;
  const std::string& path_;
  uint64_t offset_ = 0;
  std::future<void> pending_;
};

// A cache file <name>.qvlw is written as <name>.qvlw.tmp-<writer's pid>, then renamed
// into place.
constexpr std::string_view kExtension = ".qvlw";
constexpr std::string_view kTempSuffix = ".tmp-";
// A packing writes its temporary file continuously; one untouched this long is left over.
constexpr std::chrono::minutes kStaleTemporaryAge{10};

// Removes the temporary files of writers that died before renaming them (Ctrl-C or a kill
// while packing): each may hold most of a packed model, and nothing else would ever
// remove it. A writer still alive, or one of another user (kill says EPERM), keeps its
// file; so does one written to lately, which may be a live writer in another PID
// namespace (a container sharing the folder), where kill cannot see it.
void RemoveStaleTemporaries(const std::string& dir) {
  const auto quiet_since = std::filesystem::file_time_type::clock::now() - kStaleTemporaryAge;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::string mark = StrCat(kExtension, kTempSuffix);
    const size_t at = name.rfind(mark);
    if (at == std::string::npos) continue;
    const std::string digits = name.substr(at + mark.size());
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const auto pid = static_cast<pid_t>(std::stol(digits));
    if (pid <= 0 || pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    if (std::filesystem::last_write_time(it->path(), ignored) > quiet_since || ignored) continue;
    if (std::filesystem::remove(it->path(), ignored)) {
      LogInfo("removed ", it->path().string(), ", left by an interrupted packing (process ", pid,
              ")");
    }
  }
}

void WriteCache(const std::string& path, const std::string& header,
                const std::vector<PackedWeightCache::Entry>& entries,
                const std::vector<Placed>& placed, ThreadPool& pool) {
  const std::string tmp = StrCat(path, kTempSuffix, static_cast<long>(::getpid()));
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) Fail(ErrorCode::kIo, "cannot create ", tmp, ": ", std::strerror(errno));
  ChunkWriter writer(f, tmp);
  try {
    writer.Write(header.data(), header.size());
    uint64_t written = header.size();
    const std::vector<uint8_t> zeros(kAlign, 0);
    std::unique_ptr<uint8_t, decltype(&std::free)> chunks[2] = {{nullptr, &std::free},
                                                                {nullptr, &std::free}};
    for (auto& chunk : chunks) {
      chunk.reset(static_cast<uint8_t*>(std::aligned_alloc(64, kChunkBytes)));
      if (chunk == nullptr) Fail(ErrorCode::kIo, "out of memory packing ", path);
    }
    int next = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
      const auto& e = entries[i];
      writer.Write(zeros.data(), placed[i].offset - written);
      const PackedLayout layout = PackedLayoutFor(e.format, e.view.rows, e.view.cols);
      const int64_t per_chunk = std::max<int64_t>(1, kChunkBytes / layout.panel_bytes);
      for (int64_t p0 = 0; p0 < layout.panels; p0 += per_chunk) {
        const int64_t p1 = std::min(layout.panels, p0 + per_chunk);
        uint8_t* chunk = chunks[next].get();
        next ^= 1;
        pool.ParallelFor(p1 - p0, 4, [&](int64_t a, int64_t b, int) {
          PackPanels(e.view, e.format, p0 + a, p0 + b, chunk + a * layout.panel_bytes);
        });
        writer.Write(chunk, (p1 - p0) * layout.panel_bytes);
      }
      written = placed[i].offset + placed[i].bytes;
    }
    const uint64_t total = placed.empty() ? header.size() : AlignUp(written);
    writer.Write(zeros.data(), total - written);
    writer.Wait();
    if (std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0) {
      Fail(ErrorCode::kIo, "cannot write ", tmp, ": ", std::strerror(errno));
    }
  } catch (...) {
    writer.Drain();
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    Fail(ErrorCode::kIo, "cannot write ", path, ": ", std::strerror(err));
  }
}

std::string CacheFileName(const std::string& model_dir,
                          const std::vector<PackedWeightCache::Entry>& entries) {
  std::error_code ec;
  const std::string abs = std::filesystem::absolute(model_dir, ec).lexically_normal().string();
  std::set<std::string> formats;
  uint64_t h = Fnv1a(abs.data(), abs.size());
  for (const auto& e : entries) {
    formats.insert(WeightFormatName(e.format));
    h = Fnv1a(e.name.data(), e.name.size(), h);
    h = Fnv1a(&e.format, sizeof(e.format), h);
  }
  std::string name = Hex(Fnv1a(abs.data(), abs.size())).substr(0, 12);
  for (const std::string& f : formats) name += "-" + f;
  return StrCat(name, "-", Hex(h).substr(0, 8), kExtension);
}

}  // namespace

const char* PackedCacheSourceName(PackedWeightCache::Source source) {
  switch (source) {
    case PackedWeightCache::Source::kMapped:
      return "mapped";
    case PackedWeightCache::Source::kBuilt:
      return "built";
    case PackedWeightCache::Source::kMemory:
      return "memory";
  }
  return "?";
}

std::string DefaultWeightCacheDir() {
  if (const char* env = std::getenv("QVL_CACHE_DIR"); env != nullptr && *env != '\0') return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return StrCat(xdg, "/qvl");
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return StrCat(home, "/.cache/qvl");
  }
  return "";
}

uint64_t CheckpointKey(const TensorStore& store) {
  uint64_t h = Fnv1a(&kLayoutVersion, sizeof(kLayoutVersion));
  for (const auto& file : store.files()) {
    const std::string& path = file->path();
    const std::string base = std::filesystem::path(path).filename().string();
    h = Fnv1a(base.data(), base.size(), h);
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) {
      const int64_t stamp[2] = {
          static_cast<int64_t>(st.st_size),
          static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
      h = Fnv1a(stamp, sizeof(stamp), h);
    }
    const MappedFile& m = file->mapped();
    uint64_t header_len = 0;
    if (m.size() >= 8) std::memcpy(&header_len, m.data(), 8);
    const uint64_t data_begin = std::min<uint64_t>(m.size(), 8 + header_len);
    h = Fnv1a(m.data(), static_cast<size_t>(data_begin), h);
    // Windows spread over the data: another checkpoint of the same shapes (a fine-tune
    // copied with its file times kept, by cp -p, rsync -a or tar) differs in all of them,
    // and they cost a few hundred page reads, not the file.
    const uint64_t data_bytes = m.size() - data_begin;
    for (uint64_t i = 0; i < kSampledWindows && data_bytes > 0; ++i) {
      const uint64_t offset = data_begin + data_bytes * i / kSampledWindows;
      h = Fnv1a(m.data() + offset, static_cast<size_t>(std::min(kWindowBytes, m.size() - offset)),
                h);
    }
  }
  return h;
}

std::unique_ptr<PackedWeightCache> PackedWeightCache::Open(const std::string& dir,
                                                           const std::string& model_dir,
                                                           uint64_t checkpoint_key,
                                                           const std::vector<Entry>& entries,
                                                           ThreadPool& pool) {
  std::unique_ptr<PackedWeightCache> cache(new PackedWeightCache());
  std::vector<Placed> placed;
  uint64_t total = 0;
  const std::string header = EncodeHeader(checkpoint_key, entries, &placed, &total);
  for (const Placed& p : placed) cache->bytes_ += p.bytes;

  std::shared_ptr<MappedFile> mapped;
  if (!dir.empty() && !entries.empty()) {
    const std::string path = StrCat(dir, "/", CacheFileName(model_dir, entries));
    RemoveStaleTemporaries(dir);
    try {
      auto file = std::make_shared<MappedFile>(path);
      if (Matches(*file, header, total)) {
        mapped = std::move(file);
        cache->source_ = Source::kMapped;
      } else {
        LogInfo("packed weights in ", path, " are stale or incomplete; rebuilding");
      }
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kNotFound) LogWarn(e.what(), "; rebuilding");
    }
    if (!mapped) {
      try {
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        // The folder's own failure, not the missing file's "No such file or directory" below.
        if (ec) Fail(ErrorCode::kIo, "cannot create the folder ", dir, ": ", ec.message());
        LogInfo("packing ", entries.size(), " weights (", cache->bytes_ >> 20, " MiB) into ", path);
        WriteCache(path, header, entries, placed, pool);
        auto file = std::make_shared<MappedFile>(path);
        if (!Matches(*file, header, total)) Fail(ErrorCode::kIo, path, " changed while written");
        mapped = std::move(file);
        cache->source_ = Source::kBuilt;
      } catch (const Error& e) {
        LogWarn("cannot cache packed weights (", e.what(), "); packing in memory for this run");
      }
    }
  }
  cache->file_ = mapped;

  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    LinearWeight w = mapped ? LinearWeight::FromPacked(e.format, e.view.rows, e.view.cols,
                                                       mapped->data() + placed[i].offset, mapped)
                            : LinearWeight::Prepare(e.view, e.format, &pool);
    cache->by_data_[e.view.data].push_back(std::move(w));
  }
  return cache;
}

LinearWeight PackedWeightCache::Find(const WeightView& view, WeightFormat format) const {
  auto it = by_data_.find(view.data);
  if (it != by_data_.end()) {
    for (const LinearWeight& w : it->second) {
      if (w.format() == format && w.rows() == view.rows && w.cols() == view.cols) return w;
    }
  }
  return LinearWeight();
}

}  // namespace qvl
