// The two hub calls a download needs, as huggingface_hub makes them: the file list of a
// revision (GET /api/models/REPO/revision/REV) and one file's metadata
// (HEAD /REPO/resolve/COMMIT/FILE). Hub errors become one-line qvl::Error messages.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "hub/http_session.h"

namespace qvl::hub {

struct RetryPolicy {
  int max_attempts = 5;          // consecutive failures without progress before giving up
  double backoff_seconds = 1.0;  // doubled after each failure
  double max_backoff_seconds = 16.0;
};

// How to reach the hub.
struct HubAccess {
  std::string endpoint;  // e.g. https://huggingface.co, no trailing slash
  std::string token;     // sent as "Authorization: Bearer" to the endpoint only
  // A token was set but is not sent: the endpoint is plain http on another machine.
  bool token_withheld = false;
  // How the user sets a token, for error messages: what the running verb offers.
  std::string token_hint = "HF_TOKEN";
  NetworkSettings network;
  RetryPolicy retry;
};

// True for an http(s) URL whose host is this machine: localhost, 127.0.0.0/8 or [::1].
bool IsLoopbackUrl(const std::string& url);

// Sets access->token to `token`, unless access->endpoint is plain http to a host other
// than this machine: then the token stays home (token_withheld), with one warning line.
void SetHubToken(HubAccess* access, const std::string& token);

struct RepoRevision {
  std::string commit;              // 40 hex digits
  std::vector<std::string> files;  // siblings[].rfilename
};

struct RemoteFile {
  std::string name;
  std::string etag;  // sha256 for LFS files, git blob sha1 otherwise; names the blob
  uint64_t size = 0;
  std::string commit;
  std::string url;          // where GET finds the bytes: the resolve URL or the CDN it redirects to
  bool send_token = false;  // false when the URL is on another host (signed CDN URLs)
};

RepoRevision FetchRepoRevision(HttpSession& session, const HubAccess& access,
                               const std::string& repo, const std::string& revision);

RemoteFile FetchFileMetadata(HttpSession& session, const HubAccess& access, const std::string& repo,
                             const std::string& commit, const std::string& filename);

// Headers every hub request carries (authorization when `with_token` and a token is set).
std::vector<std::string> HubHeaders(const HubAccess& access, bool with_token);

// The longest wait a server's Retry-After gets; a longer one is cut to this.
inline constexpr double kMaxRetryAfterSeconds = 60;

// Retry-After of a response, in seconds from `now`: a number of seconds or an HTTP date.
// Absent or unreadable: nullopt.
std::optional<double> RetryAfterSeconds(const HttpHeaders& headers, std::time_t now);

// How long to wait before retry number `failures` (1, 2, ...) of `response`: its
// Retry-After for 429 and 503 (at most kMaxRetryAfterSeconds), else the policy's backoff.
double RetryDelaySeconds(const RetryPolicy& retry, int failures, const HttpResponse& response);

// "HTTP 503" or the network error, for retry lines.
std::string DescribeFailure(const HttpResponse& response);

// "7 s", "0.5 s".
std::string FormatWait(double seconds);

// Sleeps `seconds`; false when cancelled meanwhile.
bool WaitBeforeRetry(double seconds, const CancelFlags& cancel);

// Throws the error a user should see for a failed hub response about `repo`; `what` names
// the thing requested, e.g. "file config.json".
[[noreturn]] void FailForResponse(const HttpResponse& response, const HubAccess& access,
                                  const std::string& repo, const std::string& what);

}  // namespace qvl::hub
