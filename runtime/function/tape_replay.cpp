// Calling a traced function while a gradient tape is alive on this thread:
// its traced body runs node by node through ops::apply (control/replay.h),
// the taken branch of an If and the iterations of a While included, so that
// the tape records every op as if the function had run eagerly (the
// executor's plan would hide them from it).
#include "function/tape_replay.h"

#include "autodiff/tape.h"
#include "control/replay.h"
#include "function/concrete.h"

namespace ag::detail {

bool must_replay_for_tape() {
  return autodiff::tape_active();
}

void replay_for_tape(const ConcreteCore& core, std::span<const Tensor* const> inputs,
                     std::vector<Tensor>& outputs) {
  std::vector<Tensor> args;
  args.reserve(inputs.size());
  for (const Tensor* t : inputs) args.push_back(*t);
  outputs = replay_body(*core.traced, args);
}

}  // namespace ag::detail
