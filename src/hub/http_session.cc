#include "hub/http_session.h"

#include <curl/curl.h>
#include <strings.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <mutex>

#include "base/error.h"
#include "base/trim_space.h"

namespace qvl::hub {
namespace {

// Error bodies and API documents are small; this bounds memory on a misbehaving server.
constexpr size_t kMaxBufferedBody = 32u << 20;

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      Fail(ErrorCode::kInternal, "libcurl failed to initialize");
    }
  });
}

Transport Classify(CURLcode code) {
  switch (code) {
    case CURLE_OK:
      return Transport::kOk;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
      return Transport::kCannotConnect;
    case CURLE_OPERATION_TIMEDOUT:
      return Transport::kTimedOut;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return Transport::kInterrupted;
    case CURLE_WRITE_ERROR:
    case CURLE_ABORTED_BY_CALLBACK:
      return Transport::kStopped;
    default:
      return Transport::kFailed;
  }
}

}  // namespace

void HttpHeaders::Add(std::string name, std::string value) {
  entries_.emplace_back(std::move(name), std::move(value));
}

std::string HttpHeaders::Get(const std::string& name) const {
  for (const auto& [key, value] : entries_) {
    if (strcasecmp(key.c_str(), name.c_str()) == 0) return value;
  }
  return std::string();
}

bool HttpHeaders::Has(const std::string& name) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const auto& entry) {
    return strcasecmp(entry.first.c_str(), name.c_str()) == 0;
  });
}

bool HttpResponse::Transient() const {
  switch (transport) {
    case Transport::kCannotConnect:
    case Transport::kTimedOut:
    case Transport::kInterrupted:
      return true;
    case Transport::kOk:
      return status == 408 || status == 429 || status >= 500;
    default:
      return false;
  }
}

// State shared with libcurl's callbacks during one Send().
struct HttpSession::Transfer {
  const HttpRequest* request;
  HttpResponse* response;
  const CancelFlags* cancel;
  std::chrono::steady_clock::duration stall_timeout;
  bool started = false;
  bool overflow = false;
  // CURLOPT_LOW_SPEED_TIME averages over several seconds, so a stall is caught late;
  // watching for the byte count to move catches it after stall_timeout.
  bool stalled = false;
  curl_off_t last_received = -1;
  std::chrono::steady_clock::time_point last_data = std::chrono::steady_clock::now();

  static size_t OnHeader(char* data, size_t size, size_t count, void* self) {
    auto* t = static_cast<Transfer*>(self);
    const std::string line(data, size * count);
    if (line.rfind("HTTP/", 0) == 0) {
      // A new response (after a redirect or a 100 Continue): forget the previous one.
      t->response->headers.Clear();
      const size_t space = line.find(' ');
      t->response->status = space == std::string::npos ? 0 : std::atol(line.c_str() + space + 1);
    } else if (const size_t colon = line.find(':'); colon != std::string::npos) {
      t->response->headers.Add(std::string(TrimSpace(line.substr(0, colon))),
                               std::string(TrimSpace(line.substr(colon + 1))));
    }
    return size * count;
  }

  static size_t OnBody(char* data, size_t size, size_t count, void* self) {
    auto* t = static_cast<Transfer*>(self);
    const size_t bytes = size * count;
    const long status = t->response->status;
    const bool success = status >= 200 && status < 300;
    if (success && t->request->on_body) {
      if (!t->started) {
        t->started = true;
        if (t->request->on_start && !t->request->on_start(status, t->response->headers)) return 0;
      }
      return t->request->on_body(data, bytes) ? bytes : 0;
    }
    if (t->response->body.size() + bytes > kMaxBufferedBody) {
      t->overflow = true;
      return 0;
    }
    t->response->body.append(data, bytes);
    return bytes;
  }

  // libcurl calls this at least once a second, also while no data flows.
  static int OnProgress(void* self, curl_off_t, curl_off_t received, curl_off_t, curl_off_t) {
    auto* t = static_cast<Transfer*>(self);
    if (t->cancel->cancelled()) return 1;
    const auto now = std::chrono::steady_clock::now();
    if (received != t->last_received) {
      t->last_received = received;
      t->last_data = now;
    } else if (now - t->last_data > t->stall_timeout) {
      t->stalled = true;
      return 1;
    }
    return 0;
  }
};

HttpSession::HttpSession(const NetworkSettings& settings, CancelFlags cancel)
    : settings_(settings), cancel_(cancel) {
  InitCurlOnce();
  curl_ = curl_easy_init();
  if (curl_ == nullptr) Fail(ErrorCode::kInternal, "libcurl could not create a handle");
}

HttpSession::~HttpSession() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

HttpResponse HttpSession::Send(const HttpRequest& request) {
  CURL* curl = static_cast<CURL*>(curl_);
  // Reset keeps the connection cache, so requests to one host reuse a connection.
  curl_easy_reset(curl);
  HttpResponse response;
  response.url = request.url;
  Transfer transfer{&request, &response, &cancel_,
                    std::chrono::seconds(settings_.stall_timeout_seconds)};

  curl_slist* headers = nullptr;
  for (const std::string& header : request.headers)
    headers = curl_slist_append(headers, header.c_str());

  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "qvl/0.1 (hf_hub-compatible downloader)");
  curl_easy_setopt(curl, CURLOPT_NOBODY, request.head ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, request.follow_redirects ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, 512L * 1024L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT,
                   static_cast<long>(settings_.connect_timeout_seconds));
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &Transfer::OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Transfer::OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &Transfer::OnProgress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &transfer);

  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  response.transport = Classify(code);
  if (response.transport != Transport::kOk) response.transport_error = curl_easy_strerror(code);
  if (transfer.stalled) {
    response.transport = Transport::kTimedOut;
    response.transport_error = StrCat("no data for ", settings_.stall_timeout_seconds, " s");
  }
  if (transfer.overflow) {
    response.transport = Transport::kFailed;
    response.transport_error = "response larger than 32 MiB";
  }
  return response;
}

namespace {

std::string EnvValue(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

std::string UrlOrigin(const std::string& url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return std::string();
  return Lower(url.substr(0, url.find_first_of("/?#", scheme_end + 3)));
}

std::string UrlHost(const std::string& url) {
  const std::string origin = UrlOrigin(url);
  const size_t scheme_end = origin.find("://");
  if (scheme_end == std::string::npos) return std::string();
  std::string host = origin.substr(scheme_end + 3);
  if (const size_t at = host.rfind('@'); at != std::string::npos) host.erase(0, at + 1);
  if (host.rfind("[", 0) == 0) return host.substr(1, host.find(']') - 1);
  return host.substr(0, host.find(':'));
}

namespace {

// no_proxy as libcurl reads it: "*", or host names and domains separated by commas.
bool Bypassed(const std::string& host) {
  std::string list = EnvValue("no_proxy");
  if (list.empty()) list = EnvValue("NO_PROXY");
  list = Lower(list);
  size_t begin = 0;
  while (begin <= list.size()) {
    size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    std::string entry(TrimSpace(std::string_view(list).substr(begin, end - begin)));
    begin = end + 1;
    if (entry == "*") return true;
    if (!entry.empty() && entry.front() == '.') entry.erase(0, 1);
    if (entry.empty()) continue;
    if (host == entry || (host.size() > entry.size() &&
                          host.compare(host.size() - entry.size(), entry.size(), entry) == 0 &&
                          host[host.size() - entry.size() - 1] == '.')) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string ProxyFor(const std::string& url) {
  const std::string origin = UrlOrigin(url);
  const size_t scheme_end = origin.find("://");
  if (scheme_end == std::string::npos) return std::string();
  const std::string scheme = origin.substr(0, scheme_end);
  const std::string host = UrlHost(url);
  // libcurl reads http_proxy only in lower case (HTTP_PROXY can be set by a CGI client).
  std::vector<const char*> names = {"http_proxy"};
  if (scheme == "https") names = {"https_proxy", "HTTPS_PROXY"};
  names.push_back("all_proxy");
  names.push_back("ALL_PROXY");
  for (const char* name : names) {
    std::string proxy = EnvValue(name);
    if (proxy.empty()) continue;
    if (Bypassed(host)) return std::string();
    // A password in the proxy URL stays out of messages.
    const size_t start = proxy.find("://") == std::string::npos ? 0 : proxy.find("://") + 3;
    const size_t at = proxy.find('@', start);
    if (at != std::string::npos && at < proxy.find('/', start)) {
      proxy = proxy.substr(0, start) + "***@" + proxy.substr(at + 1);
    }
    return StrCat(proxy, " (", name, ")");
  }
  return std::string();
}

std::string PercentEncode(const std::string& text, const std::string& keep) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
        keep.find(static_cast<char>(c)) != std::string::npos) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace qvl::hub
