#include "base/error.h"

namespace qvl {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kContextLength:
      return "context_length";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kTooLarge:
      return "too_large";
    case ErrorCode::kUnauthenticated:
      return "unauthenticated";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kCorrupt:
      return "corrupt";
    case ErrorCode::kIo:
      return "io";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

}  // namespace qvl
