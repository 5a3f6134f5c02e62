// The gradient of a staged If is an If over the branches' gradients
// (TensorFlow's cond gradient): on the same predicate, each branch runs its
// forward body again under a tape (control/replay.h) and differentiates
// sum_k <output_k, output gradient_k> with respect to the captured values.
// The branches recompute their forward ops rather than export them (a
// print or an assert in a branch is not run again; other side effects make
// the If not differentiable).
#include "control/if_gradient.h"

#include "ag/control_flow.h"
#include "ag/gradients.h"
#include "control/replay.h"

namespace ag::detail {
namespace {

// The gradients of `captures` through `body`, zeros where not connected and
// undefined for integer and bool captures.
std::vector<Tensor> branch_gradients(const graph::Body& body, const std::vector<Tensor>& captures,
                                     std::span<const Tensor> output_grads) {
  GradientTape tape;
  std::vector<Tensor> inputs, sources;
  // The captures themselves, not aliases: a tape around this one (a
  // gradient of a gradient) must see the gradient If use them.
  for (const Tensor& c : captures) {
    inputs.push_back(c);
    if (is_floating(c.dtype())) {
      tape.watch(inputs.back());
      sources.push_back(inputs.back());
    }
  }
  std::vector<Tensor> outputs = replay_body(body, inputs, ReplayPurpose::RecomputeValues);
  Tensor target;
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!output_grads[k].defined() || !is_floating(outputs[k].dtype())) continue;
    Tensor term = reduce_sum(outputs[k] * cast(output_grads[k], outputs[k].dtype()));
    target = target.defined() ? target + term : term;
  }
  std::vector<Tensor> grads(captures.size());
  if (!target.defined()) return grads;
  std::vector<Tensor> source_grads = tape.gradient(target, sources, UnconnectedGradients::Zero);
  for (size_t i = 0, s = 0; i < captures.size(); ++i)
    if (is_floating(captures[i].dtype())) grads[i] = source_grads[s++];
  return grads;
}

}  // namespace

autodiff::StagedGradient if_gradient(const Tensor& pred, std::vector<Tensor> captures,
                                     std::shared_ptr<const graph::Body> then_body,
                                     std::shared_ptr<const graph::Body> else_body) {
  return [pred, captures = std::move(captures), then_body,
          else_body](std::span<const Tensor> output_grads) {
    std::vector<Tensor> grads(captures.size());
    auto branch = [&](const graph::Body& body) {
      return [&] {
        std::vector<Tensor> g = branch_gradients(body, captures, output_grads);
        for (size_t i = 0; i < grads.size(); ++i) grads[i] = g[i];
      };
    };
    if (pred.is_symbolic()) {
      if_stmt(pred, branch(*then_body), branch(*else_body),
              state({AG_RETVAL_PREFIX "if_gradient"}, grads));
    } else {
      branch(pred.item<bool>() ? *then_body : *else_body)();
    }
    std::vector<Tensor> result = {Tensor()};  // the predicate has none
    result.insert(result.end(), grads.begin(), grads.end());
    return result;
  };
}

}  // namespace ag::detail
