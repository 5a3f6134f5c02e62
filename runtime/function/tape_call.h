// Calling a traced function while a gradient tape is alive on this thread
// (tape_call.cpp). Internal to the runtime.
#pragma once

#include <span>
#include <vector>

#include "ag/tensor.h"

namespace ag::detail {

class ConcreteCore;

// Runs `core` for a call made while a tape is alive: its plan when no tape
// records the call; one op on the tape (the forward plan that exports
// intermediates, with the backward plan as its gradient) when one does; its
// traced body op by op through ops::apply when several do, when it has no
// such gradient, or while numerics are checked (ag/debugging.h).
void run_under_tape(const ConcreteCore& core, std::span<const Tensor* const> inputs,
                    std::vector<Tensor>& outputs);

// Runs `core`'s traced body node by node through ops::apply, as eager code
// runs its ops (control/replay.h).
void run_node_by_node(const ConcreteCore& core, std::span<const Tensor* const> inputs,
                      std::vector<Tensor>& outputs);

}  // namespace ag::detail
