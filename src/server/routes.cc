#include "server/routes.h"

namespace qvl {
namespace {

constexpr std::string_view kModelPrefix = "/v1/models/";

constexpr KnownRoute kRoutes[] = {
    {"/v1/chat/completions", "POST"},
    {"/v1/completions", "POST"},
    {"/v1/models", "GET"},
    {"/health", "GET"},
    {"/metrics", "GET"},
    {"/props", "GET"},
    {"/", "GET"},
};

}  // namespace

std::string_view ModelIdInPath(std::string_view path) {
  if (path.size() <= kModelPrefix.size() || path.substr(0, kModelPrefix.size()) != kModelPrefix) {
    return {};
  }
  return path.substr(kModelPrefix.size());
}

std::optional<KnownRoute> FindRoute(std::string_view path) {
  for (const KnownRoute& route : kRoutes) {
    if (path == route.label) return route;
  }
  if (!ModelIdInPath(path).empty()) return KnownRoute{"/v1/models/{id}", "GET"};
  return std::nullopt;
}

}  // namespace qvl
