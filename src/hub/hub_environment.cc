#include "hub/hub_environment.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/trim_space.h"

namespace qvl::hub {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::string ExpandHome(const std::string& path) {
  if (path == "~" || path.rfind("~/", 0) == 0) return Env("HOME") + path.substr(1);
  return path;
}

// HF_HOME as huggingface_hub computes it.
std::string HfHome() {
  std::string home = Env("HF_HOME");
  if (!home.empty()) return ExpandHome(home);
  std::string xdg = Env("XDG_CACHE_HOME");
  if (!xdg.empty()) return ExpandHome(xdg) + "/huggingface";
  return Env("HOME") + "/.cache/huggingface";
}

}  // namespace

std::string HubCacheDir() {
  for (const char* name : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"}) {
    std::string dir = Env(name);
    if (!dir.empty()) return ExpandHome(dir);
  }
  return HfHome() + "/hub";
}

std::string HubEndpoint(const std::string& flag) {
  std::string endpoint = !flag.empty() ? flag : Env("HF_ENDPOINT");
  if (endpoint.empty()) endpoint = kDefaultEndpoint;
  while (endpoint.size() > 1 && endpoint.back() == '/') endpoint.pop_back();
  // Without a scheme libcurl guesses plain http, which would send the token in cleartext.
  std::string lower = endpoint;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.rfind("https://", 0) != 0 && lower.rfind("http://", 0) != 0) {
    const std::string suggestion =
        endpoint.find("://") == std::string::npos ? "https://" + endpoint : std::string();
    if (!flag.empty()) {
      Fail(ErrorCode::kInvalidArgument, "--endpoint ", endpoint,
           " is not an http:// or https:// URL",
           suggestion.empty() ? std::string() : StrCat(": use --endpoint ", suggestion));
    }
    Fail(ErrorCode::kInvalidArgument, "HF_ENDPOINT=", endpoint,
         " is not an http:// or https:// URL",
         suggestion.empty() ? std::string() : StrCat(": set HF_ENDPOINT=", suggestion));
  }
  return endpoint;
}

std::string HubToken(const std::string& flag) {
  if (!flag.empty()) return flag;
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    std::string token(TrimSpace(Env(name)));
    if (!token.empty()) return token;
  }
  std::string path = Env("HF_TOKEN_PATH");
  path = path.empty() ? HfHome() + "/token" : ExpandHome(path);
  std::ifstream file(path);
  if (!file) return std::string();
  std::ostringstream text;
  text << file.rdbuf();
  return std::string(TrimSpace(text.str()));
}

bool HubOffline() {
  for (const char* name : {"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"}) {
    std::string value = Env(name);
    std::transform(value.begin(), value.end(), value.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (value == "1" || value == "true" || value == "yes" || value == "on") return true;
  }
  return false;
}

}  // namespace qvl::hub
