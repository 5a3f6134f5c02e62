// Global switches of ag::function: run_functions_eagerly (every call runs as
// plain C++, as tf.config.run_functions_eagerly does).
#include <atomic>

#include "ag/function.h"

namespace ag {
namespace {
std::atomic<bool> g_run_eagerly{false};
}  // namespace

void run_functions_eagerly(bool enabled) {
  g_run_eagerly = enabled;
}

// Read on every call of an ag::function: a relaxed load.
bool functions_run_eagerly() {
  return g_run_eagerly.load(std::memory_order_relaxed);
}

}  // namespace ag
