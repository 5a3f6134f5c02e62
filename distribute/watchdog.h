// A deadline for a call that cannot be interrupted: MPI's blocking
// collectives, which every rank has entered by the time they run. arm()
// starts a wait and disarm() ends it; a wait still armed at its deadline
// writes its message (made then, on the watchdog's thread, while the armed
// call still waits) to stderr and ends the process (exit code
// kWatchdogExitCode), which mpirun turns into the end of the job: MPI can
// neither cancel a collective nor finish one half done.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace ag::distribute {

constexpr int kWatchdogExitCode = 70;  // EX_SOFTWARE

class Watchdog {
 public:
  using Clock = std::chrono::steady_clock;

  Watchdog();
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(Clock::time_point deadline, std::function<std::string()> message);
  void disarm();

 private:
  void watch();

  std::mutex mutex_;
  std::condition_variable wake_;
  bool closing_ = false;
  bool armed_ = false;
  uint64_t generation_ = 0;  // one per arm(): a later wait has its own deadline
  Clock::time_point deadline_;
  std::function<std::string()> message_;
  std::thread thread_;  // last: it starts once the members above exist
};

}  // namespace ag::distribute
