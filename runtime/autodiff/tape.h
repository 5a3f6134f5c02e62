// What the layers above autodiff tell the active gradient tapes about values
// that do not come from ops::apply (whose ops the tapes see through
// ops::OpObserver): variable reads and staged control flow. Internal to the
// runtime.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "ag/tensor.h"

namespace ag::autodiff {

// True when a gradient tape is alive on this thread.
bool tape_active();

// A read of variable `id` gave `value`. Returns the tensor the reader should
// use: `value` itself, or, when a tape records the read, a handle with its
// own identity, so that the tape tells this read from other uses of the
// same storage.
Tensor on_variable_read(uint64_t id, bool trainable, const Tensor& value);

// A staged construct (an If or While node) took `inputs` and gave `outputs`.
// The tapes have no gradient for it yet: one that needs a gradient through
// it throws an error that says `what` (the construct and where it is).
void on_staged_construct(const std::string& what, std::span<const Tensor> inputs,
                         std::span<const Tensor> outputs);

}  // namespace ag::autodiff
