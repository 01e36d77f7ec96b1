#include "server/routes.h"

namespace qvl {
namespace {

constexpr std::string_view kModelPrefix = "/v1/models/";
constexpr std::string_view kResponsePrefix = "/v1/responses/";
constexpr std::string_view kOllamaPrefix = "/api/";

constexpr KnownRoute kRoutes[] = {
    {"/v1/chat/completions", "POST"},
    {"/v1/completions", "POST"},
    {"/v1/responses", "POST"},
    {"/v1/models", "GET"},
    {"/tokenize", "POST"},
    {"/detokenize", "POST"},
    {"/api/chat", "POST"},
    {"/api/generate", "POST"},
    {"/api/show", "POST"},
    {"/api/tags", "GET"},
    {"/api/ps", "GET"},
    {"/api/version", "GET"},
    {"/health", "GET"},
    {"/metrics", "GET"},
    {"/props", "GET"},
    {"/", "GET"},
};

std::string_view IdAfter(std::string_view prefix, std::string_view path) {
  if (path.size() <= prefix.size() || path.substr(0, prefix.size()) != prefix) return {};
  return path.substr(prefix.size());
}

}  // namespace

ErrorShape ErrorShapeFor(std::string_view path) {
  return path.substr(0, kOllamaPrefix.size()) == kOllamaPrefix ? ErrorShape::kOllama
                                                               : ErrorShape::kOpenAI;
}

std::string_view ModelIdInPath(std::string_view path) { return IdAfter(kModelPrefix, path); }

std::string_view ResponseIdInPath(std::string_view path) {
  const std::string_view id = IdAfter(kResponsePrefix, path);
  return id.find('/') == std::string_view::npos ? id : std::string_view();
}

std::optional<KnownRoute> FindRoute(std::string_view path) {
  for (const KnownRoute& route : kRoutes) {
    if (path == route.label) return route;
  }
  if (!ModelIdInPath(path).empty()) return KnownRoute{"/v1/models/{id}", "GET"};
  if (!ResponseIdInPath(path).empty()) return KnownRoute{"/v1/responses/{id}", "GET, DELETE"};
  return std::nullopt;
}

}  // namespace qvl
