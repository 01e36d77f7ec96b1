// `qvl batch -i requests.jsonl -o results.jsonl [--url http://HOST:PORT]`: an OpenAI Batch
// API file run against a running server (batch_client.h). The summary goes to stderr;
// the exit code is 1 when any request failed, so that scripts notice.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "base/error.h"
#include "cli/batch_client.h"
#include "cli/verbs.h"

namespace qvl::cli {
namespace {

struct BatchFlags {
  BatchOptions options;
  std::string input = "-";
  std::string output = "-";
};

void Batch(const BatchFlags& f) {
  std::ifstream in_file;
  if (f.input != "-") {
    in_file.open(f.input);
    if (!in_file) Fail(ErrorCode::kNotFound, "--input ", f.input, ": cannot be read");
  }
  std::ofstream out_file;
  if (f.output != "-") {
    out_file.open(f.output, std::ios::trunc);
    if (!out_file) Fail(ErrorCode::kIo, "--output ", f.output, ": cannot be written");
  }
  const BatchSummary s = RunBatch(f.input == "-" ? std::cin : in_file,
                                  f.output == "-" ? std::cout : out_file, f.options);
  if (f.output != "-" && !out_file.flush()) {
    Fail(ErrorCode::kIo, "--output ", f.output, ": write failed");
  }
  std::fprintf(stderr, "qvl batch: %lld requests: %lld answered, %lld failed\n",
               static_cast<long long>(s.requests), static_cast<long long>(s.answered),
               static_cast<long long>(s.failed));
  SetExitCode(s.failed > 0 ? 1 : 0);
}

}  // namespace

void AddBatchVerb(CLI::App& app) {
  auto f = std::make_shared<BatchFlags>();
  if (const char* key = std::getenv("OPENAI_API_KEY")) f->options.api_key = key;
  CLI::App* verb = app.add_subcommand(
      "batch", "Send an OpenAI Batch API file of requests to a running server, results in order");
  verb->add_option("-i,--input", f->input,
                   "JSON lines of {\"custom_id\", \"method\": \"POST\", \"url\", \"body\"} "
                   "(- for stdin)")
      ->capture_default_str();
  verb->add_option("-o,--output", f->output,
                   "where the result lines go, one per request in input order (- for stdout)")
      ->capture_default_str();
  verb->add_option("--url", f->options.url,
                   "the server: http://HOST[:PORT][/PREFIX] (qvl serve, or a proxy before "
                   "replicas; an OpenAI base URL ending in /v1 too)")
      ->capture_default_str();
  verb->add_option("--api-key", f->options.api_key,
                   "the server's --api-key (default: $OPENAI_API_KEY)");
  verb->add_option("--concurrency", f->options.concurrency,
                   "requests in flight (the server's --parallel answers them in one batch)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  verb->add_option("--timeout", f->options.timeout_seconds, "seconds one request may take")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  verb->add_option("--retries", f->options.retries,
                   "times a request answered 429 or 503, or not answered at all, is sent again")
      ->capture_default_str()
      ->check(CLI::Range(0, 100));
  verb->callback([f] { Batch(*f); });
}

}  // namespace qvl::cli
