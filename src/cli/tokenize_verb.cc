// `qvl tokenize -m DIR`: prints the token ids of the text on stdin as a JSON array on one
// line; with --decode it reads a JSON array of ids and prints their text. For checking
// prompts against other implementations.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "cli/model_flags.h"
#include "cli/verbs.h"
#include "text/tokenizer.h"

namespace qvl::cli {
namespace {

struct TokenizeOptions {
  std::string model_dir;
  bool decode = false;
  bool skip_special = false;
};

std::string ReadStdin() {
  std::string input;
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), stdin)) > 0) input.append(buffer, n);
  if (std::ferror(stdin)) Fail(ErrorCode::kIo, "stdin: read failed");
  return input;
}

// The ids of `input`; each must name a token of `tokenizer` (Decode would skip one that
// does not, printing nothing for it).
std::vector<int32_t> ParseIds(const std::string& input, const Tokenizer& tokenizer,
                              const std::string& tokenizer_path) {
  const nlohmann::json json = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (!json.is_array())
    Fail(ErrorCode::kInvalidArgument, "stdin: expected a JSON array of token ids");
  std::vector<int32_t> ids;
  ids.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    const nlohmann::json& id = json[i];
    if (!id.is_number_integer()) {
      Fail(ErrorCode::kInvalidArgument, "stdin: element ", i, " (", id.dump(),
           ") is not a token id");
    }
    // Unsigned JSON numbers above INT64_MAX would wrap in get<int64_t>.
    const bool in_range =
        id.is_number_unsigned()
            ? id.get<uint64_t>() < static_cast<uint64_t>(tokenizer.vocab_size())
            : id.get<int64_t>() >= 0 && id.get<int64_t>() < tokenizer.vocab_size();
    if (!in_range || tokenizer.IdToToken(static_cast<int32_t>(id.get<int64_t>())).empty()) {
      Fail(ErrorCode::kInvalidArgument, "stdin: element ", i, " (", id.dump(),
           ") is not a token id of ", tokenizer_path, " (0 to ", tokenizer.vocab_size() - 1, ")");
    }
    ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return ids;
}

void RunTokenize(const TokenizeOptions& options) {
  const std::string dir = OnDiskModelFolder(options.model_dir, "qvl tokenize");
  const std::string path = (std::filesystem::path(dir) / "tokenizer.json").string();
  const Tokenizer tokenizer = Tokenizer::FromFile(path);
  const std::string input = ReadStdin();
  if (options.decode) {
    const std::string text =
        tokenizer.Decode(ParseIds(input, tokenizer, path), options.skip_special);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  std::string line = "[";
  for (const int32_t id : tokenizer.Encode(input)) {
    if (line.size() > 1) line.push_back(',');
    line.append(std::to_string(id));
  }
  line.append("]\n");
  std::fwrite(line.data(), 1, line.size(), stdout);
}

}  // namespace

void AddTokenizeVerb(CLI::App& app) {
  auto options = std::make_shared<TokenizeOptions>();
  CLI::App* verb = app.add_subcommand(
      "tokenize", "Print the token ids of stdin as a JSON array (--decode: the reverse)");
  verb->add_option("-m,--model", options->model_dir,
                   "model folder holding tokenizer.json, or ORG/NAME in the Hugging Face cache")
      ->required();
  verb->add_flag("--decode", options->decode, "read a JSON array of ids and print its text");
  verb->add_flag("--skip-special", options->skip_special,
                 "with --decode, leave out special tokens such as <|im_end|>");
  verb->callback([options] {
    RunTokenize(*options);
    SetExitCode(0);
  });
}

}  // namespace qvl::cli
