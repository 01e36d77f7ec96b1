// GET /props: what this server is and the limits it applies, so that a client (the web
// page, llama.cpp's web UI, Open WebUI) checks a request as the server will instead of
// assuming the defaults. The fields llama-server's /props has keep its names and
// meaning; `limits` is qvl's own. Every value is read from the server's options or the
// loaded engine, the owners of those facts.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "server/api_server.h"

namespace qvl {

// The /props object of a server started with `options` once `engine` is loaded.
nlohmann::json PropsJson(const ApiServerOptions& options, const Engine& engine);

// The sampling and limits `request` runs with on `engine`, its own values resolved against
// the model's generation_config and the server's defaults, under llama-server's names:
// /completion's generation_settings, and for a request that sets nothing /props'
// default_generation_settings.params.
nlohmann::json GenerationSettingsJson(const GenerationRequest& request, const Engine& engine);

}  // namespace qvl
