// The gradient of a traced function as a second traced function (as
// TensorFlow's): one joint graph, the forward replayed under a symbolic tape
// and its backward, is split in two. The forward is what does not depend on
// the output gradients; it also outputs the intermediates the backward
// reads ("exported"), so that the backward does not recompute them. Built
// once per concrete function (signature), on its first call under a tape.
// Internal to the runtime.
#pragma once

#include <memory>
#include <vector>

#include "exec/plan.h"
#include "graph/graph.h"

namespace ag::detail {

class ConcreteCore;
struct VariableState;

struct FunctionGradient {
  // The function's inputs -> its outputs, then the exported intermediates.
  std::shared_ptr<graph::Body> forward_traced;
  std::shared_ptr<const graph::Body> forward_optimized;
  std::unique_ptr<exec::Plan> forward;
  size_t num_outputs = 0;  // the function's own outputs, first among the forward's

  // Placeholders: one gradient per output in `seeded_outputs` (the floating
  // ones), the exported intermediates, then the function's inputs listed in
  // `read_inputs`. Outputs: the gradients the sources have.
  std::shared_ptr<graph::Body> backward_traced;
  std::shared_ptr<const graph::Body> backward_optimized;
  std::unique_ptr<exec::Plan> backward;
  std::vector<size_t> seeded_outputs;
  std::vector<size_t> read_inputs;

  // The variables the forward reads: sources after the function's inputs.
  std::vector<std::shared_ptr<VariableState>> variables;
  // Per source (each input, then each variable): the backward output that is
  // its gradient, or -1 for none (an integer input, an unconnected one).
  std::vector<int> gradient_of;
};

// The gradient of `core`, built on first use and cached in it. An
// UnimplementedError or InvalidArgumentError when the function's graph has no
// such gradient (a loop, a side effect, a variable read inside a staged
// construct, an op whose gradient cannot be built); it is thrown again on
// each call.
std::shared_ptr<const FunctionGradient> function_gradient(const ConcreteCore& core);

}  // namespace ag::detail
