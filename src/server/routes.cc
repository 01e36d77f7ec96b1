#include "server/routes.h"

namespace qvl {
namespace {

constexpr std::string_view kModelPrefix = "/v1/models/";
constexpr std::string_view kResponsePrefix = "/v1/responses/";
constexpr std::string_view kOllamaPrefix = "/api/";
constexpr std::string_view kAnthropicRoute = "/v1/messages";

constexpr KnownRoute kRoutes[] = {
    {"/v1/chat/completions", "POST"},
    {"/v1/completions", "POST"},
    {"/completion", "POST"},
    {"/v1/responses", "POST"},
    {"/v1/embeddings", "POST"},
    {"/v1/messages", "POST"},
    {"/v1/messages/count_tokens", "POST"},
    {"/v1/models", "GET"},
    {"/tokenize", "POST"},
    {"/apply-template", "POST"},
    {"/invocations", "POST"},
    {"/detokenize", "POST"},
    {"/api/chat", "POST"},
    {"/api/generate", "POST"},
    {"/api/embed", "POST"},
    {"/api/embeddings", "POST"},
    {"/api/show", "POST"},
    {"/api/tags", "GET"},
    {"/api/ps", "GET"},
    {"/api/version", "GET"},
    {"/health", "GET"},
    {"/metrics", "GET"},
    {"/props", "GET"},
    {"/", "GET"},
};

struct RouteAlias {
  std::string_view path;   // "/chat/completions"
  std::string_view route;  // "/v1/chat/completions"
};

constexpr RouteAlias kAliases[] = {
    {"/chat/completions", "/v1/chat/completions"},
    {"/completions", "/v1/completions"},
    {"/embeddings", "/v1/embeddings"},
    {"/models", "/v1/models"},
    {"/v1/health", "/health"},
    {"/ping", "/health"},
};

std::string_view IdAfter(std::string_view prefix, std::string_view path) {
  if (path.size() <= prefix.size() || path.substr(0, prefix.size()) != prefix) return {};
  return path.substr(prefix.size());
}

}  // namespace

ErrorShape ErrorShapeFor(std::string_view path) {
  if (path.starts_with(kOllamaPrefix)) return ErrorShape::kOllama;
  const size_t n = kAnthropicRoute.size();
  if (path.starts_with(kAnthropicRoute) && (path.size() == n || path[n] == '/')) {
    return ErrorShape::kAnthropic;
  }
  return ErrorShape::kOpenAI;
}

std::string MergedSlashes(std::string_view path) {
  std::string merged;
  merged.reserve(path.size());
  for (const char c : path) {
    if (c != '/' || merged.empty() || merged.back() != '/') merged.push_back(c);
  }
  return merged;
}

std::string_view ModelIdInPath(std::string_view path) { return IdAfter(kModelPrefix, path); }

std::string_view ResponseIdInPath(std::string_view path) {
  const std::string_view id = IdAfter(kResponsePrefix, path);
  return id.find('/') == std::string_view::npos ? id : std::string_view();
}

std::vector<std::string> PathsOf(std::string_view route) {
  std::vector<std::string> paths = {std::string(route)};
  for (const RouteAlias& alias : kAliases) {
    if (alias.route == route) paths.emplace_back(alias.path);
  }
  return paths;
}

std::optional<KnownRoute> FindRoute(std::string_view path) {
  for (const RouteAlias& alias : kAliases) {
    if (path == alias.path) path = alias.route;
  }
  for (const KnownRoute& route : kRoutes) {
    if (path == route.label) return route;
  }
  if (!ModelIdInPath(path).empty()) return KnownRoute{"/v1/models/{id}", "GET"};
  if (!ResponseIdInPath(path).empty()) return KnownRoute{"/v1/responses/{id}", "GET, DELETE"};
  return std::nullopt;
}

}  // namespace qvl
