#include "watchdog.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace ag::distribute {

Watchdog::Watchdog() : thread_([this] { watch(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void Watchdog::arm(Clock::time_point deadline, std::function<std::string()> message) {
  {
    std::lock_guard lock(mutex_);
    armed_ = true;
    ++generation_;
    deadline_ = deadline;
    message_ = std::move(message);
  }
  wake_.notify_one();
}

void Watchdog::disarm() {
  std::lock_guard lock(mutex_);
  armed_ = false;
  message_ = nullptr;  // it may refer to the call that has ended
}

void Watchdog::watch() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return closing_ || armed_; });
    if (closing_) return;
    const uint64_t generation = generation_;
    const bool ended = wake_.wait_until(
        lock, deadline_, [&] { return closing_ || !armed_ || generation_ != generation; });
    if (ended) continue;
    std::fprintf(stderr, "%s\n", message_().c_str());
    std::fflush(stderr);
    std::_Exit(kWatchdogExitCode);
  }
}

}  // namespace ag::distribute
