// The names a client may give as "model": the served id first, then its aliases. One
// check, one message, for the request field and for GET /v1/models/{id}.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qvl {

// Throws FieldError(kNotFound, "model") naming every served name unless `name` is one.
void RequireServedModel(std::string_view name, const std::vector<std::string>& names);

}  // namespace qvl
