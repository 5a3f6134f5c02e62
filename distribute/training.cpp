// Horovod-style training: DistributedOptimizer (gradients combined over the
// ranks, small ones fused into shared buffers) and broadcast_variables.
// Written with the public ops, so that both run eagerly and trace.
#include <cstdint>
#include <vector>

#include "ag/distribute.h"
#include "ag/error.h"
#include "ag/ops.h"
#include "ready_order.h"

namespace ag::distribute {
namespace {

// Gradients (by index) that share one all_reduce.
struct FusionBuffer {
  DType dtype;
  int64_t bytes = 0;
  std::vector<size_t> members;
};

// The buffers in the gradients' order: a gradient below the threshold joins
// the open buffer of its dtype until that would pass the threshold; any
// other gets a buffer of its own. Every rank gets the same buffers from the
// same dtypes and shapes.
std::vector<FusionBuffer> plan_fusion(const std::vector<Tensor>& grads, int64_t threshold) {
  std::vector<FusionBuffer> buffers;
  std::vector<size_t> open_by_dtype(size_t(kNumDTypes), SIZE_MAX);
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) continue;
    const int64_t bytes = static_bytes(grads[i]);
    const DType dtype = grads[i].dtype();
    if (bytes < 0 || bytes >= threshold) {
      buffers.push_back({dtype, bytes, {i}});
      continue;
    }
    size_t& open = open_by_dtype[size_t(dtype)];
    if (open == SIZE_MAX || buffers[open].bytes + bytes > threshold) {
      open = buffers.size();
      buffers.push_back({dtype, 0, {}});
    }
    buffers[open].bytes += bytes;
    buffers[open].members.push_back(i);
  }
  return buffers;
}

}  // namespace

DistributedOptimizer::DistributedOptimizer(optimizers::Optimizer& optimizer,
                                           DistributedOptions options)
    : optimizer_(optimizer), options_(options) {
  if (options.fusion_threshold_bytes < 0) {
    throw InvalidArgumentError("DistributedOptimizer: fusion_threshold_bytes must be >= 0, got " +
                               std::to_string(options.fusion_threshold_bytes));
  }
}

std::vector<Tensor> DistributedOptimizer::reduce_gradients(const std::vector<Tensor>& grads,
                                                           CallSite site) const {
  std::vector<Tensor> reduced(grads.size());
  for (const FusionBuffer& buffer : plan_fusion(grads, options_.fusion_threshold_bytes)) {
    all_reduce_fused(grads, buffer.members, options_.op, reduced, site);
  }
  return reduced;
}

std::vector<Tensor> DistributedOptimizer::gradient(GradientTape& tape, const Tensor& loss,
                                                   const std::vector<Variable>& variables,
                                                   CallSite site) const {
  ReadyOrderReducer reducer(variables.size(), options_, site);
  tape.on_gradient_ready([&](size_t index, const Tensor& g) { reducer.ready(index, g); });
  try {
    tape.gradient(loss, variables);
  } catch (...) {
    tape.on_gradient_ready(nullptr);  // a check failed before the backward took it
    throw;
  }
  return reducer.finish();
}

void DistributedOptimizer::minimize(GradientTape& tape, const Tensor& loss,
                                    const std::vector<Variable>& variables, CallSite site) {
  optimizer_.apply_gradients(gradient(tape, loss, variables, site), variables);
}

void DistributedOptimizer::apply_gradients(const std::vector<Tensor>& grads,
                                           const std::vector<Variable>& variables, CallSite site) {
  optimizer_.apply_gradients(reduce_gradients(grads, site), variables);
}

void DistributedOptimizer::apply_gradients(
    const std::vector<std::pair<Tensor, Variable>>& grads_and_vars, CallSite site) {
  std::vector<Tensor> grads;
  std::vector<Variable> variables;
  for (const auto& [grad, variable] : grads_and_vars) {
    grads.push_back(grad);
    variables.push_back(variable);
  }
  apply_gradients(grads, variables, site);
}

void broadcast_variables(const std::vector<Variable>& variables, int root, CallSite site) {
  for (Variable variable : variables) variable.assign(broadcast(variable.read(), root, site));
}

}  // namespace ag::distribute
