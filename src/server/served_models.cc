#include "server/served_models.h"

#include "base/field_error.h"

namespace qvl {

void RequireServedModel(std::string_view name, const std::vector<std::string>& names) {
  std::string served;
  for (const std::string& candidate : names) {
    if (candidate == name) return;
    served += StrCat(served.empty() ? "\"" : ", \"", candidate, "\"");
  }
  FailField(ErrorCode::kNotFound, "model", "the model \"", name,
            "\" does not exist; this server serves ", served);
}

}  // namespace qvl
