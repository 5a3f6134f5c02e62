// The numerics check of ag::debugging::enable_check_numerics (ag/debugging.h):
// its switch, which ops::apply and the calls of traced functions read, and
// the check of one op's output. Internal to the runtime.
#pragma once

#include <atomic>

#include "ag/tensor.h"
#include "ops/op_registry.h"

namespace ag::ops {

extern std::atomic<bool> g_check_numerics;

inline bool check_numerics_on() {
  return g_check_numerics.load(std::memory_order_relaxed);
}

// Throws an InvalidArgumentError naming `op` and `site` when `output`, an
// eager floating-point tensor, holds a NaN or an infinity; any other tensor
// passes.
void check_output_numerics(OpId op, const Tensor& output, CallSite site);

}  // namespace ag::ops
