#include "cli/batch_client.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string_view>
#include <thread>
#include <vector>

#include "base/error.h"

namespace qvl::cli {
namespace {

// The routes the Batch API takes, as qvl serves them.
constexpr std::string_view kBatchUrls[] = {"/v1/chat/completions", "/v1/completions",
                                           "/v1/embeddings", "/v1/responses"};
// Requests read ahead of the oldest one not yet written, per request in flight.
constexpr size_t kReadAhead = 4;

struct Endpoint {
  std::string origin;  // http://HOST[:PORT]
  std::string prefix;  // "" or /PREFIX, without a trailing slash
};

Endpoint ParseUrl(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (url.rfind("https://", 0) == 0) {
    Fail(ErrorCode::kInvalidArgument, "--url ", url,
         ": https is not supported; give the server's own http address");
  }
  const size_t slash = url.find('/', kScheme.size());
  if (url.rfind(kScheme, 0) != 0 || slash == kScheme.size() || url.size() == kScheme.size()) {
    Fail(ErrorCode::kInvalidArgument, "--url ", url, ": expected http://HOST[:PORT][/PREFIX]");
  }
  Endpoint e{url.substr(0, slash), slash == std::string::npos ? "" : url.substr(slash)};
  while (!e.prefix.empty() && e.prefix.back() == '/') e.prefix.pop_back();
  return e;
}

// OpenAI's form of a batch request's id.
std::string NewRequestId(std::mt19937_64& rng) {
  char id[40];
  std::snprintf(id, sizeof(id), "batch_req_%016llx%08llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng() & 0xffffffffu));
  return id;
}

// Keys stay in the order written: the Batch API's, and the server's in a body.
using Json = nlohmann::ordered_json;

std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

struct Job {
  int64_t line = 0;  // in the input, from 1
  std::string id;    // the output line's "id"
  Json custom_id;    // null when the line names none
  std::string path;  // where to POST body; empty for a line that is no request
  std::string body;
  std::string error;  // why the line is no request
  Json output;
  bool done = false;
  bool answered = false;
};

class BatchRun {
 public:
  BatchRun(std::ostream& out, const BatchOptions& options)
      : out_(out),
        options_(options),
        endpoint_(ParseUrl(options.url)),
        rng_(std::random_device{}()) {}

  BatchSummary Run(std::istream& in);

 private:
  // Fills `job` from the text of its line, or its error.
  void ReadRequest(const std::string& text, Job& job);
  // The output of a job that got no response.
  void SetError(Job& job, const char* code, const std::string& message) const;
  void Send(Job& job) const;
  void Work();
  // Writes the finished jobs at the front of the window; with `wait_for_one`, first waits
  // until the oldest is finished. Holds `lock`.
  void WriteFinished(std::unique_lock<std::mutex>& lock, bool wait_for_one);

  std::ostream& out_;
  const BatchOptions& options_;
  const Endpoint endpoint_;
  std::mt19937_64 rng_;
  std::set<std::string> custom_ids_;
  BatchSummary summary_;

  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Job>> window_;  // read, not yet written, in input order
  std::deque<Job*> to_send_;
  bool reading_done_ = false;
};

void BatchRun::ReadRequest(const std::string& text, Job& job) {
  const Json line = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!line.is_object()) {
    job.error = "expected a JSON object {\"custom_id\", \"method\", \"url\", \"body\"}";
    return;
  }
  if (const auto id = line.find("custom_id"); id != line.end() && id->is_string()) {
    job.custom_id = *id;
  } else {
    job.error = "custom_id: expected a string naming the request";
    return;
  }
  if (!custom_ids_.insert(job.custom_id.get<std::string>()).second) {
    job.error = "custom_id: \"" + job.custom_id.get<std::string>() + "\" names an earlier request";
    return;
  }
  if (const auto method = line.find("method"); method == line.end() || *method != "POST") {
    job.error = "method: expected \"POST\"";
    return;
  }
  const auto url = line.find("url");
  if (url == line.end() || !url->is_string() ||
      std::ranges::find(kBatchUrls, url->get<std::string>()) == std::end(kBatchUrls)) {
    job.error =
        "url: expected /v1/chat/completions, /v1/completions, /v1/embeddings or /v1/responses";
    return;
  }
  const auto body = line.find("body");
  if (body == line.end() || !body->is_object()) {
    job.error = "body: expected the request's JSON object";
    return;
  }
  if (const auto stream = body->find("stream"); stream != body->end() && *stream == true) {
    job.error = "body.stream: a batch takes whole answers; leave stream out";
    return;
  }
  std::string_view prefix = endpoint_.prefix;
  if (prefix.ends_with("/v1")) prefix.remove_suffix(3);  // an OpenAI base URL
  job.path = std::string(prefix) + url->get<std::string>();
  job.body = Dump(*body);
}

void BatchRun::SetError(Job& job, const char* code, const std::string& message) const {
  job.output = {{"id", job.id},
                {"custom_id", job.custom_id},
                {"response", nullptr},
                {"error", {{"code", code}, {"message", message}}}};
}

void BatchRun::Send(Job& job) const {
  httplib::Client client(endpoint_.origin);
  client.set_connection_timeout(10);
  client.set_read_timeout(options_.timeout_seconds);
  client.set_write_timeout(options_.timeout_seconds);
  httplib::Headers headers;
  if (!options_.api_key.empty()) headers.emplace("Authorization", "Bearer " + options_.api_key);
  for (int attempt = 0;; ++attempt) {
    const httplib::Result res = client.Post(job.path, headers, job.body, "application/json");
    const bool busy = res && (res->status == 429 || res->status == 503);
    if ((!res || busy) && attempt < options_.retries) {
      std::this_thread::sleep_for(std::chrono::seconds(std::min(30, 1 << std::min(attempt, 5))));
      continue;
    }
    if (!res) {
      SetError(job, "connection_error",
               StrCat("line ", job.line, ": POST ", endpoint_.origin, job.path,
                      ": no answer from the server (", httplib::to_string(res.error()), ")"));
      return;
    }
    Json body = Json::parse(res->body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded()) body = res->body;
    const std::string request_id = res->get_header_value("X-Request-Id");
    job.output = {{"id", job.id},
                  {"custom_id", job.custom_id},
                  {"response",
                   {{"status_code", res->status},
                    {"request_id", request_id.empty() ? Json() : Json(request_id)},
                    {"body", std::move(body)}}},
                  {"error", nullptr}};
    job.answered = res->status / 100 == 2;
    return;
  }
}

void BatchRun::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    changed_.wait(lock, [&] { return !to_send_.empty() || reading_done_; });
    if (to_send_.empty()) return;
    Job* job = to_send_.front();
    to_send_.pop_front();
    lock.unlock();
    Send(*job);
    lock.lock();
    job->done = true;
    changed_.notify_all();
  }
}

void BatchRun::WriteFinished(std::unique_lock<std::mutex>& lock, bool wait_for_one) {
  if (wait_for_one) changed_.wait(lock, [&] { return window_.front()->done; });
  while (!window_.empty() && window_.front()->done) {
    const Job& job = *window_.front();
    ++summary_.requests;
    ++(job.answered ? summary_.answered : summary_.failed);
    out_ << Dump(job.output) << '\n' << std::flush;
    window_.pop_front();
  }
}

BatchSummary BatchRun::Run(std::istream& in) {
  std::vector<std::thread> workers;
  for (int i = 0; i < options_.concurrency; ++i) workers.emplace_back([this] { Work(); });
  std::string text;
  int64_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto job = std::make_unique<Job>();
    job->line = line;
    job->id = NewRequestId(rng_);
    ReadRequest(text, *job);
    if (!job->error.empty()) {
      SetError(*job, "invalid_request", StrCat("line ", line, ": ", job->error));
      job->done = true;
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (!job->done) to_send_.push_back(job.get());
    window_.push_back(std::move(job));
    changed_.notify_all();
    WriteFinished(lock, window_.size() >= kReadAhead * static_cast<size_t>(options_.concurrency));
  }
  {
    std::unique_lock<std::mutex> lock(mu_);
    reading_done_ = true;
    changed_.notify_all();
    while (!window_.empty()) WriteFinished(lock, true);
  }
  for (std::thread& t : workers) t.join();
  return summary_;
}

}  // namespace

BatchSummary RunBatch(std::istream& in, std::ostream& out, const BatchOptions& options) {
  BatchRun run(out, options);
  return run.Run(in);
}

}  // namespace qvl::cli
