#include "ag/variable.h"

#include <atomic>
#include <ostream>

#include "autodiff/tape.h"
#include "graph/variable_state.h"
#include "trace/trace_state.h"

namespace ag {

namespace {

std::atomic<uint64_t> g_next_variable_id{1};

std::vector<Tensor> add_variable_node(graph::NodeKind kind,
                                      const std::shared_ptr<detail::VariableState>& state,
                                      const Tensor* operand) {
  graph::Node node;
  node.kind = kind;
  node.variable = state;
  node.outputs = {{state->dtype, state->shape}};
  if (operand) {
    Tensor value = operand->dtype() == state->dtype ? *operand : cast(*operand, state->dtype, {});
    node.inputs.push_back(trace::resolve(value));
  }
  return trace::add_node(std::move(node));
}

}  // namespace

Variable::Variable(const Tensor& initial_value, std::string name, bool trainable) {
  if (trace::TraceState* trace = trace::current()) {
    if (!trace->allow_variable_creation) {
      throw ValueError(
          "ag::function '" + trace->function_name +
          "' only supports Variables created on its first call. Make sure the Variable is "
          "created once (for example under `if (!v)` with a std::optional member) or "
          "outside the function.");
    }
    if (initial_value.is_symbolic()) {
      throw ValueError("the initial value of Variable '" + name +
                       "' created inside ag::function '" + trace->function_name +
                       "' depends on the function's arguments; use a constant");
    }
  }
  if (!initial_value.defined())
    throw InvalidArgumentError("Variable: the initial value is undefined");
  state_ = std::make_shared<detail::VariableState>();
  state_->value = initial_value;
  state_->dtype = initial_value.dtype();
  state_->shape = initial_value.shape();
  state_->id = g_next_variable_id++;
  state_->name = name.empty() ? "Variable" : std::move(name);
  state_->trainable = trainable;
}

Tensor Variable::read() const {
  Tensor value = trace::current()
                     ? add_variable_node(graph::NodeKind::ReadVariable, state_, nullptr)[0]
                     : state_->read();
  if (!autodiff::tape_active()) return value;
  return autodiff::on_variable_read(state_->id, state_->trainable, value);
}

Tensor Variable::assign(const Tensor& value) {
  if (trace::current())
    return add_variable_node(graph::NodeKind::AssignVariable, state_, &value)[0];
  return state_->update(graph::NodeKind::AssignVariable, value);
}

Tensor Variable::assign_add(const Tensor& delta) {
  if (trace::current())
    return add_variable_node(graph::NodeKind::AssignAddVariable, state_, &delta)[0];
  return state_->update(graph::NodeKind::AssignAddVariable, delta);
}

Tensor Variable::assign_sub(const Tensor& delta) {
  if (trace::current())
    return add_variable_node(graph::NodeKind::AssignSubVariable, state_, &delta)[0];
  return state_->update(graph::NodeKind::AssignSubVariable, delta);
}

DType Variable::dtype() const {
  return state_->dtype;
}
const Shape& Variable::shape() const {
  return state_->shape;
}
const std::string& Variable::name() const {
  return state_->name;
}
bool Variable::trainable() const {
  return state_->trainable;
}
uint64_t Variable::id() const {
  return state_->id;
}

std::string Variable::to_string() const {
  Tensor v = state_->read();
  return "ag::Variable('" + state_->name + "', shape=" + v.shape().to_string() +
         ", dtype=" + std::string(dtype_name(v.dtype())) + ", value=" + v.values_string() + ")";
}

std::ostream& operator<<(std::ostream& os, const Variable& v) {
  return os << v.to_string();
}

}  // namespace ag
