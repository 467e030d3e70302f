#include "stop.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

#include "../common/app.hpp"

namespace stop {

namespace {

// 0: rank 0 is not writing results; 1: it is; 2: a signal came and the process is ending.
std::atomic<int> state{0};
std::atomic<std::int64_t> results{0};
std::atomic<int> signal_number{0};
int my_rank = 0;
bool checkpointing = false;  // running systems' checkpoints are written beside the results
char file[4096] = "";        // the results file, "" for none

static_assert(std::atomic<int>::is_always_lock_free &&
                  std::atomic<std::int64_t>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

void put(char* line, std::size_t& at, std::size_t size, const char* text) {
  for (; *text != '\0' && at + 1 < size; ++text)
    line[at++] = *text;
}

// Prints the line (rank 0) and ends the process; async-signal-safe.
[[noreturn]] void stop_now() {
  if (my_rank == 0) {
    char line[4096 + 256];
    std::size_t at = 0;
    const int sig = signal_number.load();
    put(line, at, sizeof line, "baton-pipeline: stopped by ");
    put(line, at, sizeof line, sig == SIGINT ? "SIGINT" : "SIGTERM");
    const std::int64_t held = results.load();
    if (file[0] != '\0' && held == 0) {
      ::unlink(file);  // holds nothing: a later run starts afresh without --resume
      put(line, at, sizeof line, " before any result was written; no results file is kept");
      if (checkpointing)
        put(line, at, sizeof line,
            " (the running systems' checkpoints, where written, are kept for --resume)");
    } else if (file[0] != '\0') {
      char digits[24];
      int n = 0;
      for (std::int64_t v = held; n == 0 || v > 0; v /= 10)
        digits[n++] = static_cast<char>('0' + v % 10);
      char number[24];
      for (int i = 0; i < n; ++i)
        number[i] = digits[n - 1 - i];
      number[n] = '\0';
      put(line, at, sizeof line, ": '");
      put(line, at, sizeof line, file);
      put(line, at, sizeof line, "' holds ");
      put(line, at, sizeof line, number);
      put(line, at, sizeof line, " complete results; --resume goes on from them");
    } else {
      put(line, at, sizeof line, " (--output none: no results were kept)");
    }
    put(line, at, sizeof line, "\n");
    for (std::size_t done = 0; done < at;) {
      const ssize_t n = ::write(STDERR_FILENO, line + done, at - done);
      if (n <= 0)
        break;
      done += static_cast<std::size_t>(n);
    }
  } else {
    // The other ranks give rank 0 a second to say so: a launcher that sees one rank end with an
    // error may kill the rest at once (MPICH's hydra does), and rank 0's line was lost when
    // another rank ended first (CI, about one run in two on a fast build). The launcher ends
    // them when rank 0 has ended; sleep() is async-signal-safe.
    ::sleep(1);
  }
  ::_exit(app::exit_stopped);
}

extern "C" void on_signal(int sig) {
  int expected = 0;
  signal_number.compare_exchange_strong(expected, sig);
  for (;;) {
    int s = state.load();
    if (s == 0 && state.compare_exchange_weak(s, 2))
      stop_now();
    if (s == 1 && state.compare_exchange_weak(s, 2))
      return;  // rank 0 is writing: it stops right after the write (WriteGuard)
    if (s == 2)
      return;  // already stopping
  }
}

void copy_path(const std::string& path) {
  std::strncpy(file, path.c_str(), sizeof file - 1);
  file[sizeof file - 1] = '\0';
}

}  // namespace

void install(int rank, const std::string& part, std::int64_t in_file, bool checkpoints) {
  my_rank = rank;
  checkpointing = checkpoints;
  copy_path(part);
  results = in_file;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (const int sig : {SIGTERM, SIGINT})
    if (::sigaction(sig, &action, nullptr) != 0)
      throw baton::Error(std::string("baton-pipeline: cannot install a signal handler: ") +
                         std::strerror(errno));
}

void uninstall() {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  for (const int sig : {SIGTERM, SIGINT})
    ::sigaction(sig, &action, nullptr);  // cannot fail for these signals and SIG_DFL
}

WriteGuard::WriteGuard() {
  int idle = 0;
  if (!state.compare_exchange_strong(idle, 1))
    stop_now();  // a signal came first
}

WriteGuard::~WriteGuard() {
  int writing = 1;
  if (!state.compare_exchange_strong(writing, 0))
    stop_now();  // a signal came during the write
}

void WriteGuard::written(std::int64_t in_file) {
  results = in_file;
}

}  // namespace stop
