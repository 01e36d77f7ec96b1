// qvl dump -m DIR --request REQ.json --out OUT.safetensors: every stage of one request
// under the reference fixtures' tensor names, to check a port against a reference.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "base/mapped_file.h"
#include "cli/flag_ranges.h"
#include "cli/model_flags.h"
#include "cli/verbs.h"
#include "engine/loaded_model.h"
#include "engine/request_preparer.h"
#include "engine/tensor_dump.h"
#include "image/image_budget.h"
#include "image/preprocessor_config.h"
#include "image/video_budget.h"
#include "model/safetensors.h"
#include "server/chat_request.h"
#include "server/media_fields.h"
#include "text/tokenizer.h"

namespace qvl::cli {
namespace {

struct DumpFlags {
  ModelFlags model;
  std::string request;
  std::string out;
  std::string teacher;
  DumpOptions dump;
};

void RunDump(const DumpFlags& f) {
  const std::string dir = f.model.ResolveFolder();
  ModelOptions options = f.model.Options();
  LoadedModel loaded = LoadModel(dir, options);
  Qwen3VLModel& model = *loaded.model;
  const ImageProcessorParams& image_params = loaded.settings.image_params;
  // Image paths in the request are relative to its folder, as in the fixtures.
  ChatRequestPolicy policy;
  policy.media.local.enabled = true;
  policy.media.local.base_dir = std::filesystem::absolute(f.request).parent_path();
  policy.pixels_per_image_token = PixelsPerImageToken(image_params);
  policy.pixels_per_video_token = PixelsPerVideoToken(loaded.settings.video_params.image);
  ChatRequest request = ParseChatRequest(ReadFileToString(f.request), policy);

  // The reference (transformers) knows no server budget: images get the model's range,
  // and videos its range in pixels of their frames (a budget in tokens would also count
  // their timestamps), unless the request bounds them itself.
  EngineOptions engine;
  engine.context_tokens = std::min(model.config().text.max_position_embeddings,
                                   static_cast<int64_t>(kContextTokens.max));
  engine.max_pixels = image_params.max_pixels;
  const ImageProcessorParams& video_image = loaded.settings.video_params.image;
  VideoInput reference_range;
  reference_range.budget.min_pixels = video_image.min_pixels;
  reference_range.budget.max_pixels = video_image.max_pixels;
  ApplyVideoDefaults(reference_range, &request.generation.videos);
  const int64_t per_video_token = PixelsPerVideoToken(video_image);
  engine.max_video_tokens = (video_image.max_pixels + per_video_token - 1) / per_video_token;
  // Room above the frames' range for the text around them, so that the range holds.
  engine.video_token_limit = 2 * engine.max_video_tokens;
  const RequestPreparer preparer(
      model.config(), model.folder().generation, loaded.settings.tokenizer, image_params,
      loaded.settings.video_params, engine, /*encodings=*/nullptr, loaded.settings.chat_template);
  DumpOptions dump = f.dump;
  dump.threads = f.model.Threads();
  if (!f.teacher.empty()) {
    const SafetensorsFile golden(f.teacher);
    const TensorInfo* t = golden.Find("greedy_tokens");
    if (t == nullptr || t->dtype != DType::kI64) {
      Fail(ErrorCode::kInvalidArgument, f.teacher,
           ": no I64 tensor greedy_tokens to teacher-force");
    }
    const int64_t* ids = reinterpret_cast<const int64_t*>(t->data);
    dump.forced.assign(ids, ids + t->numel());
  }
  const std::vector<TensorData> tensors = DumpRequest(model, preparer, request.generation, dump);
  WriteSafetensors(f.out, tensors);
  std::fprintf(stderr, "wrote %zu tensors to %s\n", tensors.size(), f.out.c_str());
}

}  // namespace

void AddDumpVerb(CLI::App& app) {
  auto f = std::make_shared<DumpFlags>();
  f->model.dtype = "f32";
  CLI::App* verb = app.add_subcommand(
      "dump", "Run one request and save every intermediate tensor (reference fixture names)");
  f->model.AddTo(verb);
  verb->add_option("--request", f->request,
                   "OpenAI-style chat request (JSON); image paths relative to it")
      ->required();
  verb->add_option("--out", f->out, "output .safetensors file")->required();
  verb->add_option("--tokens", f->dump.tokens, "greedy decode steps")
      ->check(InRange(request_ranges::kMaxTokens))
      ->capture_default_str();
  verb->add_option("--teacher", f->teacher,
                   "safetensors with greedy_tokens to feed while decoding (teacher forcing)");
  verb->callback([f] {
    RunDump(*f);
    SetExitCode(0);
  });
}

}  // namespace qvl::cli
