// Test support: runs the built qvl binary under a pseudo-terminal, as a person at a
// terminal runs it: stdin, stdout and stderr are the terminal, Ctrl+C (byte 3) sends
// SIGINT and Ctrl+D (byte 4) ends the input, and a "\n" written comes back as "\r\n".
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <utility>

namespace qvl::cli {

class TerminalSession {
 public:
  // Starts `qvl ARGS`; `env` goes before the binary, as `env` takes it ("NO_COLOR=1 ",
  // "-u NO_COLOR "). The shell execs qvl, so that Ctrl+C reaches qvl alone.
  explicit TerminalSession(const std::string& args, const std::string& env = "") {
    const std::string command = "exec env " + env + QVL_BUILD_DIR + "/qvl " + args;
    pid_ = ::forkpty(&terminal_, nullptr, nullptr, nullptr);
    if (pid_ == 0) {
      ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    EXPECT_GT(pid_, 0) << command;
  }
  ~TerminalSession() {
    if (pid_ > 0) Finish();
  }

  // Types `text` (as keys: "\x03" is Ctrl+C).
  void Type(const std::string& text) {
    EXPECT_EQ(::write(terminal_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }

  // Reads until the output since the last call holds `text`; returns that output (up to
  // and including `text`), or all of it, failing the test, after `seconds`.
  std::string ReadUntil(const std::string& text, int seconds = 120) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    size_t found;
    while ((found = unread_.find(text)) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{terminal_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0 || !ReadSome()) {
        ADD_FAILURE() << "no \"" << text << "\" in:\n" << unread_;
        std::string all = std::move(unread_);
        unread_.clear();
        return all;
      }
    }
    std::string upto = unread_.substr(0, found + text.size());
    unread_.erase(0, found + text.size());
    return upto;
  }

  // Waits for output after what ReadUntil returned; returns it.
  std::string ReadMore(int seconds = 120) {
    pollfd p{terminal_, POLLIN, 0};
    if (unread_.empty() && (::poll(&p, 1, seconds * 1000) <= 0 || !ReadSome())) {
      ADD_FAILURE() << "no output in " << seconds << " s";
    }
    return std::exchange(unread_, "");
  }

  // Waits for the process to end; returns what it wrote since the last ReadUntil and
  // checks its exit code.
  std::string Finish(int expected_exit_code = 0) {
    while (ReadSome()) {
    }
    ::close(terminal_);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == expected_exit_code) << unread_;
    std::string rest = std::move(unread_);
    unread_.clear();
    return rest;
  }

 private:
  // Once the child is gone, reading the terminal fails (EIO): that is the end.
  bool ReadSome() {
    char buffer[4096];
    const ssize_t n = ::read(terminal_, buffer, sizeof(buffer));
    if (n <= 0) return false;
    unread_.append(buffer, static_cast<size_t>(n));
    return true;
  }

  int terminal_ = -1;
  pid_t pid_ = -1;
  std::string unread_;
};

}  // namespace qvl::cli
