#include "hub/mock_hub_server.h"

#include <httplib.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "hub/content_digest.h"

namespace qvl::hub::testing {

namespace {

struct Fault {
  uint64_t cut_after = 0;
  int cut_times = 0;
  uint64_t stall_after = 0;
  int stall_seconds = 0;
  int stall_times = 0;
  bool corrupt = false;
};

// An ETag header value. (Built with += because g++ 12 misreports "\"" + s + "\"".)
std::string Quoted(const std::string& text) {
  std::string quoted = "\"";
  quoted += text;
  quoted += '"';
  return quoted;
}

}  // namespace

struct MockHubServer::Impl {
  // The CDN is another origin, as on the real hub, so tokens must not travel there.
  httplib::Server hub;
  httplib::Server cdn;
  std::thread hub_thread;
  std::thread cdn_thread;
  int hub_port = 0;
  int cdn_port = 0;
  mutable std::mutex mu;
  std::map<std::string, MockRepo> repos;
  std::map<std::string, MockFile> by_sha;  // LFS content for /cdn/
  std::map<std::string, Fault> faults;     // by file name
  struct Failure {
    std::string prefix;
    int status;
    int times;
    std::string retry_after;
  };
  std::vector<Failure> failures;
  std::vector<MockRequest> log;
  EtagStyle etag_style = EtagStyle::kLowerHex;

  // The ETag header of a file whose digest is `hex`, in the server's style.
  std::string Etag(const std::string& hex) const {
    std::string etag = hex;
    if (etag_style == EtagStyle::kUpperHex) {
      for (char& c : etag) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (etag_style == EtagStyle::kOpaque) {
      etag = "mirror-" + hex.substr(0, 12);
    }
    return Quoted(etag);
  }

  bool Authorized(const MockRepo& repo, const httplib::Request& req) {
    return repo.token.empty() || req.get_header_value("Authorization") == "Bearer " + repo.token;
  }

  // Repo by id, or an error response (404 unknown, 401 gated without token).
  const MockRepo* FindRepo(const std::string& id, const httplib::Request& req,
                           httplib::Response& res) {
    auto it = repos.find(id);
    if (it == repos.end()) {
      res.status = 404;
      res.set_header("X-Error-Code", "RepoNotFound");
      res.set_content(R"({"error":"Repository not found"})", "application/json");
      return nullptr;
    }
    if (!Authorized(it->second, req)) {
      res.status = 401;
      res.set_header("X-Error-Code", "GatedRepo");
      res.set_content(R"({"error":"Access to this model is restricted"})", "application/json");
      return nullptr;
    }
    return &it->second;
  }

  // The file's bytes with Range support; a GET claims the faults armed for the file.
  void ServeBody(const MockFile& file, const httplib::Request& req, httplib::Response& res) {
    Fault& fault = faults[file.name];
    auto content = std::make_shared<std::string>(file.content);
    if (fault.corrupt && !content->empty()) (*content)[content->size() / 2] ^= 0x5a;
    uint64_t cut_after = UINT64_MAX, stall_after = UINT64_MAX;
    int stall_seconds = 0;
    if (req.method == "GET" && fault.cut_times > 0) {
      --fault.cut_times;
      cut_after = fault.cut_after;
    }
    if (req.method == "GET" && fault.stall_times > 0) {
      --fault.stall_times;
      stall_after = fault.stall_after;
      stall_seconds = fault.stall_seconds;
    }
    auto sent = std::make_shared<uint64_t>(0);
    res.set_header("Accept-Ranges", "bytes");
    res.set_content_provider(content->size(), "application/octet-stream",
                             [content, sent, cut_after, stall_after, stall_seconds](
                                 size_t offset, size_t length, httplib::DataSink& sink) {
                               size_t chunk = std::min<size_t>(length, 64 * 1024);
                               if (*sent<stall_after&& * sent + chunk> stall_after)
                                 chunk = stall_after - *sent;
                               if (*sent<cut_after&& * sent + chunk> cut_after)
                                 chunk = cut_after - *sent;
                               if (*sent == cut_after)
                                 return false;  // httplib closes the connection
                               if (*sent == stall_after && stall_seconds > 0) {
                                 std::this_thread::sleep_for(std::chrono::seconds(stall_seconds));
                               }
                               if (chunk > 0 && !sink.write(content->data() + offset, chunk))
                                 return false;
                               *sent += chunk;
                               return true;
                             });
  }

  void Resolve(const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    const MockRepo* repo = FindRepo(req.matches[1], req, res);
    if (repo == nullptr) return;
    const std::string revision = req.matches[2];
    if (revision != "main" && revision != repo->commit) {
      res.status = 404;
      res.set_header("X-Error-Code", "RevisionNotFound");
      return;
    }
    res.set_header("X-Repo-Commit", repo->commit);
    for (const MockFile& file : repo->files) {
      if (file.name != req.matches[3]) continue;
      if (file.lfs) {
        const std::string sha = DigestOf(DigestKind::kSha256, file.content);
        res.status = 302;
        res.set_header("Location",
                       "http://127.0.0.1:" + std::to_string(cdn_port) + "/cdn/" + sha + "?sig=1");
        res.set_header("X-Linked-Etag", Etag(sha));
        res.set_header("X-Linked-Size", std::to_string(file.content.size()));
        res.set_header("ETag", Etag(DigestOf(DigestKind::kGitBlobSha1, "pointer " + sha)));
        res.set_content("Found. Redirecting to the CDN", "text/plain");
        return;
      }
      res.set_header("ETag", Etag(DigestOf(DigestKind::kGitBlobSha1, file.content)));
      ServeBody(file, req, res);
      return;
    }
    res.status = 404;
    res.set_header("X-Error-Code", "EntryNotFound");
  }
};

MockRepo LoadRepoFromFolder(const std::string& id, const std::string& folder) {
  MockRepo repo;
  repo.id = id;
  repo.commit = DigestOf(DigestKind::kGitBlobSha1, id);
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  for (const auto& path : paths) {
    std::string content(std::filesystem::file_size(path), '\0');
    std::ifstream(path, std::ios::binary).read(content.data(), content.size());
    const std::string name = path.filename().string();
    const bool lfs = name == "tokenizer.json" || path.extension() == ".safetensors";
    repo.files.push_back({name, std::move(content), lfs});
  }
  repo.files.push_back({"README.md", "# test model\n", false});
  repo.files.push_back({".gitattributes", "*.safetensors filter=lfs\n", false});
  return repo;
}

MockHubServer::MockHubServer() : impl_(std::make_unique<Impl>()) {
  Impl* impl = impl_.get();
  auto record = [impl](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(impl->mu);
    impl->log.push_back({req.method, req.path, req.get_header_value("Range"),
                         req.get_header_value("Authorization")});
    for (Impl::Failure& failure : impl->failures) {
      if (failure.times > 0 && req.path.rfind(failure.prefix, 0) == 0) {
        --failure.times;
        res.status = failure.status;
        if (!failure.retry_after.empty()) res.set_header("Retry-After", failure.retry_after);
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  };
  impl->hub.set_pre_routing_handler(record);
  impl->cdn.set_pre_routing_handler(record);
  impl->hub.Get(R"(/api/models/([^/]+/[^/]+)/revision/(.+))",
                [impl](const httplib::Request& req, httplib::Response& res) {
                  std::lock_guard<std::mutex> lock(impl->mu);
                  const MockRepo* repo = impl->FindRepo(req.matches[1], req, res);
                  if (repo == nullptr) return;
                  if (req.matches[2] != "main" && req.matches[2] != repo->commit) {
                    res.status = 404;
                    res.set_header("X-Error-Code", "RevisionNotFound");
                    return;
                  }
                  nlohmann::json info = {{"id", repo->id}, {"sha", repo->commit}};
                  info["siblings"] = nlohmann::json::array();
                  for (const MockFile& file : repo->files) {
                    info["siblings"].push_back({{"rfilename", file.name}});
                  }
                  res.set_content(info.dump(), "application/json");
                });
  impl->hub.Get(
      R"(/([^/]+/[^/]+)/resolve/([^/]+)/(.+))",
      [impl](const httplib::Request& req, httplib::Response& res) { impl->Resolve(req, res); });
  impl->cdn.Get(R"(/cdn/([0-9a-f]{64}))",
                [impl](const httplib::Request& req, httplib::Response& res) {
                  std::lock_guard<std::mutex> lock(impl->mu);
                  auto it = impl->by_sha.find(req.matches[1]);
                  if (it == impl->by_sha.end()) {
                    res.status = 404;
                    return;
                  }
                  impl->ServeBody(it->second, req, res);
                });
  impl->hub_port = impl->hub.bind_to_any_port("127.0.0.1");
  impl->cdn_port = impl->cdn.bind_to_any_port("127.0.0.1");
  impl->hub_thread = std::thread([impl] { impl->hub.listen_after_bind(); });
  impl->cdn_thread = std::thread([impl] { impl->cdn.listen_after_bind(); });
  while (!impl->hub.is_running() || !impl->cdn.is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

MockHubServer::~MockHubServer() { Stop(); }

void MockHubServer::Stop() {
  impl_->hub.stop();
  impl_->cdn.stop();
  if (impl_->hub_thread.joinable()) impl_->hub_thread.join();
  if (impl_->cdn_thread.joinable()) impl_->cdn_thread.join();
}

void MockHubServer::AddRepo(MockRepo repo) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (const MockFile& file : repo.files) {
    if (file.lfs) {
      impl_->by_sha[DigestOf(DigestKind::kSha256, file.content)] = file;
    }
  }
  impl_->repos[repo.id] = std::move(repo);
}

std::string MockHubServer::endpoint() const {
  return "http://127.0.0.1:" + std::to_string(impl_->hub_port);
}

void MockHubServer::CutAfter(const std::string& file, uint64_t bytes, int times) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->faults[file].cut_after = bytes;
  impl_->faults[file].cut_times = times;
}

void MockHubServer::StallAfter(const std::string& file, uint64_t bytes, int seconds, int times) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Fault& fault = impl_->faults[file];
  fault.stall_after = bytes;
  fault.stall_seconds = seconds;
  fault.stall_times = times;
}

void MockHubServer::Corrupt(const std::string& file) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->faults[file].corrupt = true;
}

void MockHubServer::SetEtagStyle(EtagStyle style) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->etag_style = style;
}

void MockHubServer::FailRequests(const std::string& prefix, int status, int times,
                                 const std::string& retry_after) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->failures.push_back({prefix, status, times, retry_after});
}

std::vector<MockRequest> MockHubServer::requests() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->log;
}

int MockHubServer::CountRequests(const std::string& path_prefix) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  int count = 0;
  for (const MockRequest& request : impl_->log) count += request.path.rfind(path_prefix, 0) == 0;
  return count;
}

void MockHubServer::ClearRequests() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->log.clear();
}

}  // namespace qvl::hub::testing
