#include "server/image_fetcher.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "base/field_error.h"
#include "server/address_policy.h"
#include "server/byte_size.h"

namespace qvl {
namespace {

struct Transfer {
  const ImageFetchOptions* options = nullptr;
  std::vector<uint8_t> body;
  bool too_large = false;
  std::string refused;  // why a connection was refused, for the error message
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (static_cast<int64_t>(transfer->body.size() + n) > transfer->options->max_bytes) {
    transfer->too_large = true;
    return 0;  // aborts the transfer
  }
  transfer->body.insert(transfer->body.end(), data, data + n);
  return n;
}

// Called for every connection curl opens, with the resolved address: the one place
// where DNS answers and redirect targets can be checked without a race.
curl_socket_t OnOpenSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  auto* transfer = static_cast<Transfer*>(user);
  if (!transfer->options->allow_private_addresses) {
    const AddressKind kind = ClassifyAddress(&address->addr);
    if (kind != AddressKind::kPublic) {
      char text[64] = "?";
      if (address->family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&address->addr)->sin_addr, text,
                  sizeof(text));
      } else if (address->family == AF_INET6) {
        inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&address->addr)->sin6_addr, text,
                  sizeof(text));
      }
      transfer->refused = StrCat("the URL leads to ", text, ", a ", AddressKindName(kind),
                                 " address, which this server does not fetch from");
      return CURL_SOCKET_BAD;
    }
  }
  return ::socket(address->family, address->socktype, address->protocol);
}

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};

}  // namespace

std::vector<uint8_t> FetchImage(const std::string& url, const ImageFetchOptions& options,
                                std::string_view field) {
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    FailField(ErrorCode::kInvalidArgument, field, "only http:// and https:// URLs can be fetched");
  }
  InitCurlOnce();
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) Fail(ErrorCode::kInternal, "libcurl could not start a transfer");
  Transfer transfer;
  transfer.options = &options;
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, static_cast<long>(options.max_redirects));
  curl_easy_setopt(c, CURLOPT_PROXY, "");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  const int64_t total_ms = options.timeout_ms + options.max_bytes * 1000 / kMinFetchBytesPerSecond;
  const long stall_seconds = std::max<long>(1, (options.timeout_ms + 999) / 1000);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.timeout_ms));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(total_ms));
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, stall_seconds);
  curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options.max_bytes));
  curl_easy_setopt(c, CURLOPT_USERAGENT, "qvl");
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, OnOpenSocket);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &transfer);
  char curl_error[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_error);

  const CURLcode result = curl_easy_perform(c);
  if (transfer.too_large || result == CURLE_FILESIZE_EXCEEDED) {
    FailField(ErrorCode::kTooLarge, field, "the ", options.noun,
              " at the URL is over the limit of ", FormatByteSize(options.max_bytes), " per ",
              options.noun);
  }
  if (!transfer.refused.empty()) FailField(ErrorCode::kInvalidArgument, field, transfer.refused);
  if (result == CURLE_OPERATION_TIMEDOUT) {
    double seconds = 0;
    curl_easy_getinfo(c, CURLINFO_TOTAL_TIME, &seconds);
    if (seconds * 1000 >= static_cast<double>(total_ms)) {
      FailField(ErrorCode::kInvalidArgument, field, "fetching the ", options.noun,
                " took longer than ", total_ms / 1000.0, " s, the most given to ",
                FormatByteSize(options.max_bytes));
    }
    FailField(ErrorCode::kInvalidArgument, field, "the server of the ", options.noun,
              " sent nothing for ", stall_seconds, " s");
  }
  if (result == CURLE_TOO_MANY_REDIRECTS) {
    FailField(ErrorCode::kInvalidArgument, field, "more than ", options.max_redirects,
              " redirects");
  }
  if (result != CURLE_OK) {
    FailField(ErrorCode::kInvalidArgument, field, "could not fetch the ", options.noun, ": ",
              curl_error[0] ? curl_error : curl_easy_strerror(result));
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status > 299) {
    FailField(ErrorCode::kInvalidArgument, field, "fetching the ", options.noun,
              " got HTTP status ", status);
  }
  return std::move(transfer.body);
}

}  // namespace qvl
