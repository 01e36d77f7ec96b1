// Test-only: local servers on 127.0.0.1 (free ports) that answer like the Hugging Face
// hub for downloads: /api/models/REPO/revision/REV, HEAD/GET /REPO/resolve/REV/FILE
// (LFS files redirect to a second server, the "CDN", at /cdn/<sha256>, with X-Linked-Etag
// and X-Linked-Size), Range requests, and faults to inject (cut connections, corrupted
// bytes, stalls, 5xx). Every request is logged for the tests to inspect.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace qvl::hub::testing {

struct MockFile {
  std::string name;
  std::string content;
  bool lfs = false;  // served via a redirect to the CDN, ETag = sha256
};

struct MockRepo {
  std::string id;  // ORG/NAME
  std::string commit;
  std::vector<MockFile> files;
  std::string token;  // non-empty: gated, requests need "Authorization: Bearer <token>"
};

// All files of a model folder; *.safetensors and tokenizer.json are LFS files, as on the hub.
MockRepo LoadRepoFromFolder(const std::string& id, const std::string& folder);

struct MockRequest {
  std::string method;
  std::string path;
  std::string range;
  std::string authorization;
};

// How the hub writes its ETags: as huggingface.co (lowercase hex), as some mirrors and
// proxies rewrite them (uppercase), or as a server that publishes no digest at all.
enum class EtagStyle { kLowerHex, kUpperHex, kOpaque };

class MockHubServer {
 public:
  MockHubServer();
  ~MockHubServer();
  MockHubServer(const MockHubServer&) = delete;
  MockHubServer& operator=(const MockHubServer&) = delete;

  void AddRepo(MockRepo repo);
  std::string endpoint() const;
  void Stop();

  // Faults on the body of `file` (GET of its resolve or CDN URL), each for `times` responses.
  void CutAfter(const std::string& file, uint64_t bytes, int times = 1);
  void StallAfter(const std::string& file, uint64_t bytes, int seconds, int times = 1);
  void Corrupt(const std::string& file);
  void SetEtagStyle(EtagStyle style);
  // The next `times` requests whose path starts with `prefix` get HTTP `status`, with a
  // Retry-After header when `retry_after` is not empty.
  void FailRequests(const std::string& prefix, int status, int times,
                    const std::string& retry_after = "");

  std::vector<MockRequest> requests() const;
  int CountRequests(const std::string& path_prefix) const;
  void ClearRequests();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace qvl::hub::testing
