#include "hub/hub_api.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/error.h"
#include "base/log.h"
#include "hub/repo_cache.h"

namespace qvl::hub {
namespace {

// huggingface_hub's _normalize_etag: drop a weak-validator prefix and the quotes.
std::string NormalizeEtag(std::string etag) {
  if (etag.rfind("W/", 0) == 0) etag.erase(0, 2);
  while (!etag.empty() && etag.front() == '"') etag.erase(0, 1);
  while (!etag.empty() && etag.back() == '"') etag.pop_back();
  return etag;
}

bool IsSafeBlobName(const std::string& etag) {
  if (etag.empty() || etag.size() > 128 || etag.find("..") != std::string::npos) return false;
  for (char c : etag) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  }
  return true;
}

bool ParseSize(const std::string& text, uint64_t* size) {
  if (text.empty() || text.size() > 19) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  *size = value;
  return true;
}

bool IsRedirect(long status) { return status >= 300 && status < 400; }

// Sends a request, retrying network failures and 408/429/5xx with backoff (or the wait
// the server's Retry-After asks for), one log line per wait.
HttpResponse SendWithRetries(HttpSession& session, const HttpRequest& request,
                             const HubAccess& access) {
  for (int failures = 0;;) {
    HttpResponse response = session.Send(request);
    if (!response.Transient() || ++failures >= access.retry.max_attempts) return response;
    const double wait = RetryDelaySeconds(access.retry, failures, response);
    const std::string origin = UrlOrigin(request.url);
    LogWarn(response.transport == Transport::kOk
                ? StrCat(origin, " answered HTTP ", response.status)
                : StrCat("no answer from ", origin, " (", DescribeFailure(response), ")"),
            "; retrying in ", FormatWait(wait), " (attempt ", failures + 1, " of ",
            access.retry.max_attempts, ")");
    if (!WaitBeforeRetry(wait, session.cancel())) return response;
  }
}

}  // namespace

bool IsLoopbackUrl(const std::string& url) {
  const std::string host = UrlHost(url);
  if (host == "::1" || host == "localhost" ||
      (host.size() > 10 && host.compare(host.size() - 10, 10, ".localhost") == 0)) {
    return true;
  }
  unsigned a = 0, b = 0, c = 0, d = 0;
  char rest = 0;
  return std::sscanf(host.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &rest) == 4 && a == 127 &&
         b < 256 && c < 256 && d < 256;
}

void SetHubToken(HubAccess* access, const std::string& token) {
  access->token.clear();
  access->token_withheld = false;
  if (token.empty()) return;
  // Withheld rather than refused: a plain-http mirror (say on the LAN) still serves public
  // models to a user whose HF_TOKEN or `hf auth login` token is set for other reasons, and
  // the token never crosses the network in cleartext, where anyone on the path could
  // read it. A mere warning would still give it away; a gated model fails with a 401 that
  // says why no token was sent.
  if (UrlOrigin(access->endpoint).rfind("http://", 0) == 0 && !IsLoopbackUrl(access->endpoint)) {
    access->token_withheld = true;
    LogWarn("not sending the access token to ", access->endpoint,
            ": plain http would expose it to the network; use an https:// endpoint for gated "
            "or private models");
    return;
  }
  access->token = token;
}

std::vector<std::string> HubHeaders(const HubAccess& access, bool with_token) {
  // Identity encoding keeps Content-Length equal to the file size, as huggingface_hub asks.
  std::vector<std::string> headers = {"Accept-Encoding: identity"};
  if (with_token && !access.token.empty())
    headers.push_back("Authorization: Bearer " + access.token);
  return headers;
}

std::optional<double> RetryAfterSeconds(const HttpHeaders& headers, std::time_t now) {
  const std::string value = headers.Get("Retry-After");
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return value.size() > 9 ? 1e9 : std::stod(value);
  }
  const std::time_t date = curl_getdate(value.c_str(), nullptr);  // HTTP-date
  if (date < 0) return std::nullopt;
  return std::max(0.0, std::difftime(date, now));
}

double RetryDelaySeconds(const RetryPolicy& retry, int failures, const HttpResponse& response) {
  if (response.transport == Transport::kOk && (response.status == 429 || response.status == 503)) {
    if (const std::optional<double> after = RetryAfterSeconds(response.headers, std::time(nullptr)))
      return std::min(*after, kMaxRetryAfterSeconds);
  }
  return std::min(retry.max_backoff_seconds, retry.backoff_seconds * std::pow(2.0, failures - 1));
}

std::string DescribeFailure(const HttpResponse& response) {
  if (response.transport == Transport::kOk) return StrCat("HTTP ", response.status);
  if (response.transport == Transport::kCannotConnect) {
    if (const std::string proxy = ProxyFor(response.url); !proxy.empty()) {
      return StrCat(response.transport_error, " through the proxy ", proxy);
    }
  }
  return response.transport_error;
}

std::string FormatWait(double seconds) {
  if (seconds >= 9.5) return StrCat(std::lround(seconds), " s");
  char text[32];
  std::snprintf(text, sizeof(text), "%.2g s", seconds);
  return text;
}

bool WaitBeforeRetry(double seconds, const CancelFlags& cancel) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (cancel.cancelled()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !cancel.cancelled();
}

void FailForResponse(const HttpResponse& response, const HubAccess& access, const std::string& repo,
                     const std::string& what) {
  const std::string origin = UrlOrigin(response.url);
  const bool at_endpoint = origin == UrlOrigin(access.endpoint);
  const std::string host = at_endpoint ? access.endpoint : origin;
  if (response.transport == Transport::kStopped) {
    Fail(ErrorCode::kUnavailable, "download of ", repo, " was interrupted");
  }
  switch (response.transport) {
    case Transport::kOk:
    case Transport::kStopped:
      break;
    case Transport::kCannotConnect:
      if (const std::string proxy = ProxyFor(response.url); !proxy.empty()) {
        Fail(ErrorCode::kIo, "cannot reach ", host, " through the proxy ", proxy, " (",
             response.transport_error, ") while fetching ", what, " of ", repo,
             ": check that the proxy runs, or unset the variable");
      }
      Fail(ErrorCode::kIo, "cannot reach ", host, " (", response.transport_error,
           ") while fetching ", what, " of ", repo,
           ": check the network connection, or set HF_ENDPOINT to a mirror");
    case Transport::kTimedOut:
      Fail(ErrorCode::kIo, host, " stopped answering (", response.transport_error,
           ") while fetching ", what, " of ", repo,
           ": check the network connection and run the command again to resume");
    case Transport::kInterrupted:
      Fail(ErrorCode::kIo, "the connection to ", host, " broke (", response.transport_error,
           ") while fetching ", what, " of ", repo, "; run the command again to resume");
    case Transport::kFailed:
      Fail(ErrorCode::kIo, "cannot fetch ", what, " of ", repo, " from ", host, ": ",
           response.transport_error);
  }
  const long status = response.status;
  const std::string code = response.headers.Get("X-Error-Code");
  if ((status == 401 || status == 403) && !at_endpoint) {
    Fail(ErrorCode::kUnavailable, host, " refused the download of ", what, " of ", repo, " (HTTP ",
         status, "); run the command again for a fresh download link");
  }
  if (status == 401 || status == 403) {
    if (access.token_withheld) {
      Fail(ErrorCode::kUnauthenticated, "model ", repo, " on ", host, " answered HTTP ", status,
           ": it is gated, private or does not exist, and the access token was not sent because ",
           access.endpoint, " is plain http; use an https:// endpoint");
    }
    if (access.token.empty()) {
      Fail(ErrorCode::kUnauthenticated, "model ", repo, " on ", host, " answered HTTP ", status,
           ": it is gated, private or does not exist; set ", access.token_hint,
           " to an access token with read access, after accepting the model's terms at ",
           access.endpoint, "/", repo);
    }
    Fail(ErrorCode::kUnauthenticated, "model ", repo, " on ", host, " refused the token (HTTP ",
         status, "): check that ", access.token_hint,
         " is valid, has read access, and that its account accepted the model's terms at ",
         access.endpoint, "/", repo);
  }
  if (status == 404) {
    if (code == "RevisionNotFound") {
      Fail(ErrorCode::kNotFound, what, " of model ", repo, " not found on ", host);
    }
    if (code == "EntryNotFound") Fail(ErrorCode::kNotFound, what, " not found in model ", repo);
    Fail(ErrorCode::kNotFound, "model ", repo, " not found on ", host);
  }
  if (response.Transient()) {
    Fail(ErrorCode::kUnavailable, host, " answered HTTP ", status, " for ", what, " of ", repo,
         " after ", access.retry.max_attempts, " attempts; try again later");
  }
  Fail(ErrorCode::kIo, host, " answered HTTP ", status, " for ", what, " of ", repo);
}

RepoRevision FetchRepoRevision(HttpSession& session, const HubAccess& access,
                               const std::string& repo, const std::string& revision) {
  HttpRequest request;
  request.url =
      StrCat(access.endpoint, "/api/models/", repo, "/revision/", PercentEncode(revision, ""));
  request.headers = HubHeaders(access, true);
  const std::string what = StrCat("revision ", revision);
  HttpResponse response = SendWithRetries(session, request, access);
  if (response.transport != Transport::kOk || response.status != 200) {
    FailForResponse(response, access, repo, what);
  }
  nlohmann::json info = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (!info.is_object() || !info.contains("sha") || !info["sha"].is_string() ||
      !IsCommitHash(info["sha"].get<std::string>())) {
    Fail(ErrorCode::kCorrupt, access.endpoint, " sent no commit hash (field sha) for ", what,
         " of ", repo, "; is HF_ENDPOINT a Hugging Face hub?");
  }
  RepoRevision result;
  result.commit = info["sha"].get<std::string>();
  if (info.contains("siblings") && info["siblings"].is_array()) {
    for (const auto& sibling : info["siblings"]) {
      if (!sibling.is_object() || !sibling.contains("rfilename") ||
          !sibling["rfilename"].is_string())
        continue;
      result.files.push_back(sibling["rfilename"].get<std::string>());
    }
  }
  return result;
}

RemoteFile FetchFileMetadata(HttpSession& session, const HubAccess& access, const std::string& repo,
                             const std::string& commit, const std::string& filename) {
  const std::string what = StrCat("file ", filename);
  HttpRequest request;
  request.head = true;
  request.url =
      StrCat(access.endpoint, "/", repo, "/resolve/", commit, "/", PercentEncode(filename, "/"));
  request.headers = HubHeaders(access, true);
  HttpResponse response;
  // Relative redirects (a renamed repository) stay on the hub and are followed; an absolute
  // one points at the CDN, and its Location is where the bytes are fetched from.
  for (int hops = 0;; ++hops) {
    response = SendWithRetries(session, request, access);
    const std::string location = response.headers.Get("Location");
    if (response.transport != Transport::kOk || !IsRedirect(response.status) || hops >= 5 ||
        location.empty() || location.front() != '/') {
      break;
    }
    request.url = UrlOrigin(request.url) + location;
  }
  if (response.transport != Transport::kOk ||
      !(IsRedirect(response.status) || (response.status >= 200 && response.status < 300))) {
    FailForResponse(response, access, repo, what);
  }
  RemoteFile file;
  file.name = filename;
  file.commit = response.headers.Get("X-Repo-Commit");
  std::string etag = response.headers.Get("X-Linked-Etag");
  if (etag.empty()) etag = response.headers.Get("ETag");
  file.etag = NormalizeEtag(etag);
  std::string size = response.headers.Get("X-Linked-Size");
  if (size.empty() && !IsRedirect(response.status)) size = response.headers.Get("Content-Length");
  if (file.commit.empty()) {
    Fail(ErrorCode::kCorrupt, response.url, " has no X-Repo-Commit header; is HF_ENDPOINT (",
         access.endpoint, ") a Hugging Face hub, and is no proxy rewriting responses?");
  }
  if (!IsSafeBlobName(file.etag)) {
    Fail(ErrorCode::kCorrupt, response.url, " has no usable ETag (got '", etag, "')");
  }
  if (!ParseSize(size, &file.size)) {
    Fail(ErrorCode::kCorrupt, response.url, " has no file size (X-Linked-Size or Content-Length)");
  }
  const std::string location = response.headers.Get("Location");
  file.url = IsRedirect(response.status) && !location.empty() ? location : request.url;
  file.send_token = UrlOrigin(file.url) == UrlOrigin(access.endpoint);
  return file;
}

}  // namespace qvl::hub
