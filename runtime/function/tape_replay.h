// Calling a traced function under a gradient tape (tape_replay.cpp).
// Internal to the runtime.
#pragma once

#include <span>
#include <vector>

#include "ag/tensor.h"

namespace ag::detail {

class ConcreteCore;

// True when a call must replay its trace for a gradient tape of this thread.
bool must_replay_for_tape();
// Runs the traced body of `core` op by op through ops::apply, so that the
// tapes record it; the outputs are those the plan would give.
void replay_for_tape(const ConcreteCore& core, std::span<const Tensor* const> inputs,
                     std::vector<Tensor>& outputs);

}  // namespace ag::detail
