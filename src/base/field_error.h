// An error in one field of a request (an HTTP body, a JSON Schema, an image part). The
// message starts with the field's path ("messages[1].content[0].image_url.url: ...") and
// the path is kept apart, as data, so the HTTP layer can fill OpenAI's `param`.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "base/error.h"

namespace qvl {

class FieldError : public Error {
 public:
  FieldError(ErrorCode code, std::string field, const std::string& detail)
      : Error(code, field.empty() ? detail : StrCat(field, ": ", detail)),
        field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// Throws FieldError(code, field, StrCat(args...)).
template <typename... Args>
[[noreturn]] void FailField(ErrorCode code, std::string_view field, Args&&... args) {
  throw FieldError(code, std::string(field), StrCat(std::forward<Args>(args)...));
}

}  // namespace qvl
