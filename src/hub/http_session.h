// HTTP(S) requests for hub downloads, on libcurl. One session is one connection cache
// (keep-alive, TLS sessions) used by one thread at a time.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace qvl::hub {

struct NetworkSettings {
  int connect_timeout_seconds = 15;
  // A transfer that receives nothing for this long is dropped (and retried by the caller).
  int stall_timeout_seconds = 30;
};

// Stops transfers early: set by the user (Ctrl-C) or by a failed sibling transfer.
struct CancelFlags {
  const std::atomic<bool>* user = nullptr;
  const std::atomic<bool>* failure = nullptr;
  bool cancelled() const {
    return (user != nullptr && user->load()) || (failure != nullptr && failure->load());
  }
};

// Response headers; names compare case-insensitively.
class HttpHeaders {
 public:
  void Add(std::string name, std::string value);
  void Clear() { entries_.clear(); }
  // The first value of `name`, or "" when absent.
  std::string Get(const std::string& name) const;
  bool Has(const std::string& name) const;

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
};

enum class Transport {
  kOk,             // a complete HTTP response arrived (any status)
  kCannotConnect,  // DNS or TCP connect failed
  kTimedOut,       // connect timeout or a stalled transfer
  kInterrupted,    // the connection broke mid-response
  kStopped,        // on_body returned false or the transfer was cancelled
  kFailed,         // anything else (TLS certificate, bad URL, ...)
};

struct HttpResponse {
  Transport transport = Transport::kOk;
  std::string transport_error;  // libcurl's message when transport != kOk
  long status = 0;              // of the last response when redirects were followed
  HttpHeaders headers;          // of the last response
  std::string body;             // non-2xx bodies, and 2xx bodies when there is no on_body
  std::string url;              // the last URL requested

  // Worth retrying: a network failure, or HTTP 408, 429 or 5xx.
  bool Transient() const;
};

struct HttpRequest {
  bool head = false;
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  bool follow_redirects = false;
  // Called once before the first body byte of a 2xx response; false stops the transfer.
  std::function<bool(long status, const HttpHeaders& headers)> on_start;
  // Receives the body of a 2xx response; false stops the transfer.
  std::function<bool(const char* data, size_t size)> on_body;
};

class HttpSession {
 public:
  HttpSession(const NetworkSettings& settings, CancelFlags cancel);
  ~HttpSession();
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;

  HttpResponse Send(const HttpRequest& request);
  const CancelFlags& cancel() const { return cancel_; }

 private:
  struct Transfer;
  void* curl_;
  NetworkSettings settings_;
  CancelFlags cancel_;
};

// "scheme://host:port" of a URL, lowercased, for telling the hub apart from a CDN.
std::string UrlOrigin(const std::string& url);
// The host of a URL, lowercased, without user, port or an IPv6 address's brackets.
std::string UrlHost(const std::string& url);

// The proxy libcurl sends a request for `url` through, from the environment as libcurl
// reads it (http_proxy; https_proxy or HTTPS_PROXY; all_proxy or ALL_PROXY; no_proxy or
// NO_PROXY), as "http://proxy:3128 (https_proxy)" with any password hidden; "" for none.
std::string ProxyFor(const std::string& url);

// Percent-encodes everything but letters, digits, "-._~" and the characters in `keep`.
std::string PercentEncode(const std::string& text, const std::string& keep);

}  // namespace qvl::hub
