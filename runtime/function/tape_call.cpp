// Calling a traced function while a gradient tape is alive on this thread.
//
// One recording tape: the call is one op on it. The forward plan of the
// function's gradient (function/function_gradient.h) runs at graph speed and
// also returns the intermediates the backward needs; the tape keeps them
// with the op, whose gradient runs the backward plan. Several recording
// tapes (higher-order gradients): the traced body runs node by node through
// ops::apply (control/replay.h), the taken branch of an If and the
// iterations of a While included, so that every tape records every op as if
// the function had run eagerly. The same replay serves a function whose
// gradient cannot be traced (a loop, a side effect): it gives the gradient
// eager code would, or eager code's error.
#include "function/tape_call.h"

#include <algorithm>

#include "autodiff/tape.h"
#include "control/replay.h"
#include "function/concrete.h"
#include "function/function_gradient.h"
#include "graph/variable_state.h"
#include "ops/check_numerics.h"

namespace ag::detail {
namespace {

std::vector<Tensor> values(std::span<const Tensor* const> inputs) {
  std::vector<Tensor> out;
  out.reserve(inputs.size());
  for (const Tensor* t : inputs) out.push_back(*t);
  return out;
}

// The backward for these output gradients: its plan, or, when a tape
// records the backward's inputs (a gradient of a gradient) or numerics are
// checked, its body op by op so that the tape and the check see it.
std::vector<Tensor> run_backward(const FunctionGradient& g, const std::vector<Tensor>& outputs,
                                 std::span<const Tensor> output_gradients,
                                 const std::vector<Tensor>& exports,
                                 const std::vector<Tensor>& inputs) {
  std::vector<Tensor> args;
  for (size_t k : g.seeded_outputs) {
    args.push_back(output_gradients[k].defined() ? output_gradients[k]
                                                 : api::zeros_like(outputs[k], {}));
  }
  args.insert(args.end(), exports.begin(), exports.end());
  for (size_t i : g.read_inputs) args.push_back(inputs[i]);
  if (autodiff::tapes_recording(args, {}) > 0 || ops::check_numerics_on())
    return replay_body(*g.backward_traced, args);
  std::vector<const Tensor*> pointers;
  for (const Tensor& t : args) pointers.push_back(&t);
  std::vector<Tensor> grads;
  g.backward->run(pointers, grads);
  return grads;
}

}  // namespace

void run_node_by_node(const ConcreteCore& core, std::span<const Tensor* const> inputs,
                      std::vector<Tensor>& outputs) {
  outputs = replay_body(*core.traced, values(inputs));
}

void run_under_tape(const ConcreteCore& core, std::span<const Tensor* const> inputs,
                    std::vector<Tensor>& outputs) {
  std::vector<autodiff::VariableUse> reads;
  for (const auto& v : core.variables_used) reads.push_back({v->id, v->trainable});
  std::vector<Tensor> args = values(inputs);
  int tapes = autodiff::tapes_recording(args, reads);
  if (tapes > 1 || ops::check_numerics_on()) return run_node_by_node(core, inputs, outputs);
  if (tapes == 0) return core.plan->run(inputs, outputs);
  std::shared_ptr<const FunctionGradient> g;
  try {
    g = function_gradient(core);
  } catch (const UnimplementedError&) {
    return run_node_by_node(core, inputs, outputs);
  } catch (const InvalidArgumentError&) {
    return run_node_by_node(core, inputs, outputs);
  }

  std::vector<Tensor> staged_inputs = args;
  for (const auto& v : g->variables)
    staged_inputs.push_back(autodiff::on_variable_read(v->id, v->trainable, v->read()));
  std::vector<Tensor> results;
  g->forward->run(inputs, results);
  std::vector<Tensor> exports(results.begin() + long(g->num_outputs), results.end());
  results.resize(g->num_outputs);
  // The plan may hand back an input (or one value twice) as an output; the
  // tape tells values by identity, so each output gets its own.
  for (size_t k = 0; k < results.size(); ++k) {
    auto same = [&](const Tensor& t) { return t.id() == results[k].id(); };
    if (std::any_of(staged_inputs.begin(), staged_inputs.end(), same) ||
        std::any_of(results.begin(), results.begin() + long(k), same))
      results[k] = alias(results[k]);
  }
  outputs = results;
  auto gradient = [g, outputs = results, exports = std::move(exports),
                   inputs = std::move(args)](std::span<const Tensor> output_gradients) {
    std::vector<Tensor> grads = run_backward(*g, outputs, output_gradients, exports, inputs);
    std::vector<Tensor> result(g->gradient_of.size());
    for (size_t s = 0; s < result.size(); ++s)
      if (g->gradient_of[s] >= 0) result[s] = grads[size_t(g->gradient_of[s])];
    return result;
  };
  autodiff::on_staged_construct("the ag::function '" + core.name + "'", staged_inputs, outputs,
                                gradient);
}

}  // namespace ag::detail
