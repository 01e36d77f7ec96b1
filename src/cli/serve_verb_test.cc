// `qvl serve` refuses a wrong flag or a broken model before it listens, and names the
// model as clients will: ORG/NAME for a Hugging Face cache snapshot.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/mapped_file.h"
#include "cli/qvl_runner.h"
#include "model/scratch_folder.h"

namespace qvl::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ServeVerb, RefusesBeforeListening) {
  ScratchFolder broken("serve_broken");
  broken.LinkTinyModel({"tokenizer.json"});
  struct Case {
    std::string args, error;
  };
  for (const Case& c : {
           Case{"-m /nonexistent", "qvl: error: model folder /nonexistent does not exist"},
           Case{"-m " + kTinyModelDir + " --dtype fp16",
                "qvl: error: --dtype fp16: use f32, bf16, q8, q4 or w8a8"},
           Case{"-m " + kTinyModelDir + " --vision-dtype int3",
                "qvl: error: --vision-dtype int3: use f32, bf16, q8, q4 or w8a8"},
           Case{"-m " + broken.path(), "qvl: error: " + broken.path() +
                                           ": tokenizer.json is missing (the tokenizer "
                                           "vocabulary and merges)"},
           Case{"-m " + kTinyModelDir + " --parallel 0", "--parallel: Value 0 not in range"},
           Case{"-m " + kTinyModelDir + " --queue -1", "--queue: Value -1 not in range"},
           Case{"-m " + kTinyModelDir + " --port 70000", "--port: Value 70000 not in range"},
           Case{"-m " + kTinyModelDir + " --log-format xml", "--log-format: xml not in"},
           Case{"-m " + kTinyModelDir + " --min-video-tokens 4096",
                "qvl: error: --min-video-tokens (4096) is larger than --max-video-tokens (2048)"},
           Case{"-m Qwen/Not-Here --no-download",
                "qvl: error: model Qwen/Not-Here is not in the Hugging Face cache"},
           // Unchecked before: -1 videos refused every request with a video, a huge size
           // overflowed, NaN seconds refused every clip.
           Case{"-m " + kTinyModelDir + " --max-videos -1", "--max-videos: Value -1 not in range"},
           Case{"-m " + kTinyModelDir + " --max-video-mb 9223372036854775807",
                "--max-video-mb: Value 9223372036854775807 not in range"},
           Case{"-m " + kTinyModelDir + " --max-video-mb -1",
                "--max-video-mb: Value -1 not in range"},
           Case{"-m " + kTinyModelDir + " --max-video-frames -1",
                "--max-video-frames: Value -1 not in range"},
           Case{"-m " + kTinyModelDir + " --max-video-seconds nan",
                "--max-video-seconds: must be greater than 0 and at most 86400, got nan"},
           Case{"-m " + kTinyModelDir + " --max-video-seconds -1",
                "--max-video-seconds: must be greater than 0 and at most 86400, got -1"},
           Case{"-m " + kTinyModelDir + " --shutdown-grace nan",
                "--shutdown-grace: must be between 0 and 86400, got nan"},
           Case{"-m " + kTinyModelDir + " -c 0",
                "--ctx-size: must be between 16 and 16777216, got 0"},
           // Found only after "listening" before.
           Case{"-m " + kTinyModelDir + " --min-image-tokens 99999999",
                "qvl: error: --min-image-tokens (99999999) is larger than --max-image-tokens "
                "(1280)"},
           Case{"-m " + kTinyModelDir + " --min-pixels 2000000",
                "qvl: error: the minimum image size (2000000 pixels) is larger than the maximum "
                "(1310720)"},
           Case{"-m " + kTinyModelDir + " --max-tokens 99999",
                "qvl: error: --max-tokens (99999) must be below --ctx-size (16384): the prompt and "
                "the answer share it"},
           Case{"-m " + kTinyModelDir + " --host ''",
                "qvl: error: --host is empty: give 127.0.0.1 (this machine only) or 0.0.0.0 "
                "(every interface)"},
       }) {
    SCOPED_TRACE(c.args);
    const QvlRun r = RunQvl("serve --port 0 " + c.args);
    // Flag errors CLI11 finds (ranges, choices) exit 1 like the rest.
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, HasSubstr(c.error));
    EXPECT_THAT(r.err, Not(HasSubstr("listening")));
  }
}

// Integers are decimal whatever their leading zeros (CLI11 alone read "020" as octal 16 and
// "017" as 15, so the numbers in the message were 16 and 15), and other bases are refused
// by the flag's name.
// What --help says the key and the default body limit cover is what the server does:
// /health, /api/version and the web page need no key (api_server.cc), and the default
// body holds one video beside the images (DefaultMaxBodyBytes).
TEST(ServeVerb, TheHelpSaysWhatTheKeyAndTheBodyLimitCover) {
  const QvlRun run = RunQvl("serve --help");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("on every route but /health, /api/version and the web page"));
  EXPECT_THAT(run.out, HasSubstr("--max-images images and one video as base64"));
}

TEST(ServeVerb, IntegerFlagsAreDecimal) {
  QvlRun r = RunQvl("serve --port 0 -m " + kTinyModelDir + " --max-tokens 020 -c 017");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "qvl: error: --max-tokens (20) must be below --ctx-size (17): the prompt and the "
            "answer share it\n");
  // --max-tokens 99999 stops a qvl that took the number before it listens.
  r = RunQvl("serve -m " + kTinyModelDir + " --max-tokens 99999 --port 0x1f90");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--port: expected a decimal integer, got 0x1f90"));
  r = RunQvl("serve --port 0 -m " + kTinyModelDir + " --max-tokens 99999 --parallel 1e3");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--parallel: expected a decimal integer, got 1e3"));
  r = RunQvl("serve --port 0 -m " + kTinyModelDir + " --min-video-tokens 04096");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--min-video-tokens (4096) is larger"));
}

// --dtype and --vision-dtype take the same words in every verb that loads a model (bench
// took "bf16-packed" for what the others call bf16, and its "bf16" was another format).
TEST(ServeVerb, EveryVerbTakesTheSameDtypeWords) {
  for (const std::string verb :
       {"serve --port 0", "run 'hi'", "bench", "quantize", "dump --request x.json --out x"}) {
    for (const std::string flag : {"--dtype", "--vision-dtype"}) {
      SCOPED_TRACE(verb + " " + flag);
      const QvlRun r = RunQvl(verb + " -m " + kTinyModelDir + " " + flag + " bf16-packed");
      EXPECT_EQ(r.exit_code, 1);
      EXPECT_EQ(r.err, "qvl: error: " + flag + " bf16-packed: use f32, bf16, q8, q4 or w8a8\n");
    }
  }
  for (const std::string verb :
       {"serve --port 0", "run 'hi'", "bench", "dump --request x.json --out x"}) {
    SCOPED_TRACE(verb);
    const QvlRun r = RunQvl(verb + " -m " + kTinyModelDir + " --kv-cache-type q8_0");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "qvl: error: --kv-cache-type q8_0: use f32, bf16 or q8\n");
  }
  // And print those words: quantize said "bf16-packed" for --dtype bf16.
  ScratchFolder cache("dtype_words");
  const QvlRun r =
      RunQvl("quantize -m " + kTinyModelDir + " --dtype bf16 -t 1 --weight-cache " + cache.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(": text bf16, vision bf16 -> " + cache.path()));
}

// Runs `qvl serve ARGS` until it logs "ready", stops it with SIGTERM; returns its stderr.
std::string ServeUntilReady(const std::string& args, const std::string& log) {
  // std::string first: GCC 12 warns (-Wrestrict, a false positive) on "(" + string.
  const std::string script = std::string("(") + QVL_BUILD_DIR + "/qvl serve --port 0 " + args +
                             " 2>" + log + " & pid=$!; for i in $(seq 600); do grep -q 'ready:' " +
                             log + " && break; sleep 0.1; done; kill -TERM $pid; wait $pid)";
  EXPECT_EQ(std::system(script.c_str()), 0) << script;
  return ReadFileToString(log);
}

// A container image runs `qvl serve` with no flags (SageMaker's `docker run IMAGE serve`):
// QVL_MODEL, QVL_HOST and QVL_PORT stand for -m, --host and --port, which win over them.
TEST(ServeVerb, TheEnvironmentGivesTheModelHostAndPort) {
  QvlRun r = RunQvl("serve", "QVL_MODEL=/nonexistent QVL_HOST=127.0.0.1 ");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("qvl: error: model folder /nonexistent does not exist"));
  r = RunQvl("serve -m " + kTinyModelDir, "QVL_PORT=70000 ");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--port: Value 70000 not in range"));

  ScratchFolder folder("serve_env");
  ASSERT_EQ(::setenv("QVL_MODEL", kTinyModelDir.c_str(), 1), 0);
  ASSERT_EQ(::setenv("QVL_HOST", "127.0.0.1", 1), 0);
  const std::string log =
      ServeUntilReady("--dtype f32 --weight-cache none -t 1", folder.File("serve.log"));
  ::unsetenv("QVL_MODEL");
  ::unsetenv("QVL_HOST");
  EXPECT_THAT(log, HasSubstr("listening on http://127.0.0.1:"));
  EXPECT_THAT(log, HasSubstr("ready: "));
}

// A port another program holds is named with what to do about it.
TEST(ServeVerb, APortInUseSaysWhatToDo) {
  const int holder = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(holder, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(holder, 1), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string port = std::to_string(ntohs(address.sin_port));
  const QvlRun r = RunQvl("serve --host 127.0.0.1 --port " + port + " -m " + kTinyModelDir);
  close(holder);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("qvl: error: cannot listen on 127.0.0.1:" + port +
                               " (in use, or the address is not on this machine); give another "
                               "--port (0: any free port) or --host"));
}

TEST(ServeVerb, JsonLogsEndWithAJsonErrorLine) {
  const QvlRun r = RunQvl("serve --port 0 --log-format json -m /nonexistent");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err,
              HasSubstr(R"("level":"error","msg":"model folder /nonexistent does not exist"})"));
  EXPECT_THAT(r.err, Not(HasSubstr("qvl: error")));
}

TEST(ServeVerb, AHuggingFaceSnapshotIsServedAsOrgSlashName) {
  ScratchFolder cache("serve_cache");
  const std::string snapshot =
      cache.File("models--Qwen--Qwen3-VL-2B-Instruct/snapshots/0123456789abcdef");
  std::filesystem::create_directories(snapshot);
  for (const auto& entry : std::filesystem::directory_iterator(kTinyModelDir)) {
    std::filesystem::create_symlink(entry.path(),
                                    snapshot + "/" + entry.path().filename().string());
  }
  const std::string log = ServeUntilReady(
      "-m " + snapshot + " --dtype f32 --weight-cache none -t 1", cache.File("serve.log"));
  EXPECT_THAT(log, HasSubstr("ready: Qwen/Qwen3-VL-2B-Instruct from " + snapshot));
  EXPECT_THAT(log, HasSubstr("stopping (SIGTERM)"));
}

// The ready line names the KV cache's type and how many tokens it holds: a q8 cache
// holds 1.78 times bf16's in the same megabyte (the tiny model: 4 layers, 2 kv heads of
// 32 dims; 36 bytes a token and head against 64).
TEST(ServeVerb, TheReadyLineNamesTheKvCacheAndItsTokens) {
  ScratchFolder folder("serve_kv_cache");
  for (const auto& [type, tokens] : {std::pair<std::string, int>{"bf16", 1024}, {"q8", 1808}}) {
    const std::string log =
        ServeUntilReady("-m " + kTinyModelDir + " --weight-cache none -t 1 --kv-cache-mb 1 " +
                            "--kv-cache-type " + type,
                        folder.File("serve_" + type + ".log"));
    EXPECT_THAT(log, HasSubstr("(KV cache " + type + ", " + std::to_string(tokens) + " tokens)"));
  }
}

}  // namespace
}  // namespace qvl::cli
