// The updates of ag::Variable's shared state, which eager mode and the
// executor both call (graph/variable_state.h).
#include "graph/variable_state.h"

#include "ag/ops.h"
#include "ops/dispatch.h"

namespace ag {
namespace detail {

Tensor VariableState::read() {
  std::lock_guard lock(mu);
  return value;
}

Tensor VariableState::update(graph::NodeKind kind, const Tensor& operand) {
  Tensor delta = operand.dtype() == dtype ? operand : cast(operand, dtype, {});
  std::lock_guard lock(mu);
  Tensor next;
  if (kind == graph::NodeKind::AssignVariable) {
    next = delta;
  } else {
    ops::OpId op = kind == graph::NodeKind::AssignAddVariable ? ops::OpId::Add : ops::OpId::Sub;
    Tensor pair[] = {value, delta};
    next = ops::run_eager(op, pair, {}, nullptr);
  }
  if (next.shape() != shape) {
    throw InvalidArgumentError("Variable '" + name + "' has shape " + shape.to_string() +
                               "; cannot assign a value of shape " + next.shape().to_string());
  }
  value = next;
  return next;
}

}  // namespace detail

}  // namespace ag
