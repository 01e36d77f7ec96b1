// What turns one request's engine updates into the bytes of its HTTP response, whichever
// API shape the route speaks (chat completions, legacy text completions).
#pragma once

#include <string>
#include <string_view>

#include "engine/request.h"

namespace qvl {

class ResponseEncoder {
 public:
  virtual ~ResponseEncoder() = default;
  // What to send before any update ("" for none).
  virtual std::string Start() = 0;
  // What to send for `update` (may be ""). After the final update the response is
  // complete.
  virtual std::string Encode(GenerationUpdate&& update) = 0;
  virtual bool finished() const = 0;
  // Once finished: the request as a whole (usage over all its answers, timings, how it
  // ended), for metrics and the access log.
  virtual const GenerationUpdate& summary() const = 0;
  // The response's Content-Type.
  virtual std::string_view ContentType(bool stream) const {
    return stream ? "text/event-stream" : "application/json";
  }
  // How long the request's body took to arrive, for the timings beside the engine's
  // (which start once the request is parsed); set before the first update.
  void set_upload_ms(double ms) { upload_ms_ = ms; }

 protected:
  double upload_ms_ = 0;
};

}  // namespace qvl
