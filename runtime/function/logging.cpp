// The runtime's log: a hook and a level, set by the user, read by the trace
// cache (retracing warnings, cache decisions).
#include "function/logging.h"

#include <atomic>
#include <iostream>
#include <mutex>

namespace ag {
namespace {
std::mutex g_log_mu;
LogHook g_log_hook;
std::atomic<int> g_log_level{int(LogLevel::Warning)};
}  // namespace

void set_log_hook(LogHook hook) {
  std::lock_guard lock(g_log_mu);
  g_log_hook = std::move(hook);
}

void set_log_level(LogLevel max_level) {
  g_log_level = int(max_level);
}

namespace detail {

void log_message(LogLevel level, const std::string& message) {
  if (int(level) > g_log_level.load()) return;
  std::lock_guard lock(g_log_mu);
  if (g_log_hook) {
    g_log_hook(level, message);
  } else {
    std::cerr << (level == LogLevel::Warning ? "ag: warning: " : "ag: debug: ") << message << "\n";
  }
}

}  // namespace detail
}  // namespace ag
