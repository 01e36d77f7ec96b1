// Errors in qvl are exceptions carrying a code and a message a user can act on: the
// message names the file, field, tensor or image at fault. The code decides how a
// front end reports it (exit status, HTTP status).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace qvl {

enum class ErrorCode {
  kInvalidArgument,  // bad input from the caller: request, flag, image (HTTP 400)
  kContextLength,    // a request whose prompt and answer do not fit the context (HTTP 400)
  kNotFound,         // missing file, model, route (HTTP 404)
  kTooLarge,         // over a configured limit: body, image bytes, pixels, context (HTTP 413)
  kUnauthenticated,  // missing or wrong API key (HTTP 401)
  kUnavailable,      // busy or not ready: queue full, loading, shutting down (HTTP 503)
  kCorrupt,          // a model or data file that is malformed or lies about itself
  kIo,               // the operating system refused: read, write, mmap, network
  kInternal,         // a bug in qvl
};

const char* ErrorCodeName(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

// StrCat("tensor ", name, " has ", n, " bytes"): streams every argument into one string.
template <typename... Args>
std::string StrCat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

// Throws Error(code, StrCat(args...)).
template <typename... Args>
[[noreturn]] void Fail(ErrorCode code, Args&&... args) {
  throw Error(code, StrCat(std::forward<Args>(args)...));
}

}  // namespace qvl
