// What every optimizer shares (ag/optimizers.h): checking the gradients
// against the variables, skipping undefined gradients, the slot variables,
// the learning rate and the step count. SGD and Adam supply update_step.
#include <algorithm>
#include <string>

#include "ag/ops.h"
#include "ag/optimizers.h"
#include "function/logging.h"
#include "graph/variable_state.h"

namespace ag::optimizers {

namespace {

// The optimizer's own variables: a tape alive around apply_gradients must not
// watch them.
constexpr bool kNotTrainable = false;

std::string describe(const Variable& variable) {
  return "'" + variable.name() + "' (" + std::string(dtype_name(variable.dtype())) +
         ", shape=" + variable.shape().to_string() + ")";
}

std::string quoted_names(const std::vector<const Variable*>& variables) {
  std::string names = "[";
  for (const Variable* v : variables) {
    if (names.size() > 1) names += ", ";
    names += "'" + v->name() + "'";
  }
  return names + "]";
}

}  // namespace

Optimizer::Optimizer(double learning_rate, std::string name)
    : name_(std::move(name)),
      learning_rate_(constant(learning_rate, float64), name_ + "/learning_rate", kNotTrainable),
      iterations_(Tensor(int64_t{0}), name_ + "/iterations", kNotTrainable) {}

double Optimizer::learning_rate() const {
  return learning_rate_.state()->read().item<double>();  // the current value, even while tracing
}

void Optimizer::set_learning_rate(double learning_rate) {
  learning_rate_.assign(constant(learning_rate, float64));
}

std::vector<Variable> Optimizer::make_slots(const Variable&) {
  return {};
}

Variable Optimizer::zeros_slot(const Variable& variable, const std::string& slot) const {
  return Variable(zeros(variable.shape(), variable.dtype()),
                  name_ + "/" + variable.name() + "/" + slot, kNotTrainable);
}

std::vector<Variable>& Optimizer::slots_of(const Variable& variable) {
  auto it = slots_.find(variable.id());
  if (it == slots_.end()) it = slots_.emplace(variable.id(), make_slots(variable)).first;
  return it->second;
}

void Optimizer::build(const std::vector<Variable>& variables) {
  for (const Variable& v : variables) slots_of(v);
}

std::vector<Variable> Optimizer::slot_variables(const Variable& variable) const {
  auto it = slots_.find(variable.id());
  return it == slots_.end() ? std::vector<Variable>{} : it->second;
}

void Optimizer::apply_gradients(const std::vector<std::pair<Tensor, Variable>>& grads_and_vars) {
  std::vector<Tensor> grads;
  std::vector<Variable> variables;
  for (const auto& [g, v] : grads_and_vars) {
    grads.push_back(g);
    variables.push_back(v);
  }
  apply_gradients(grads, variables);
}

void Optimizer::apply_gradients(const std::vector<Tensor>& grads,
                                const std::vector<Variable>& variables) {
  if (grads.size() != variables.size()) {
    throw ValueError(name_ + ".apply_gradients: " + std::to_string(grads.size()) +
                     " gradients for " + std::to_string(variables.size()) +
                     " variables; give one gradient per variable, in the same order");
  }
  // Check everything before the first update, so that an error changes no variable.
  std::vector<size_t> updated;
  std::vector<const Variable*> missing;
  for (size_t i = 0; i < grads.size(); ++i) {
    const Variable& v = variables[i];
    if (!is_floating(v.dtype())) {
      throw TypeError(
          name_ + ".apply_gradients: variable " + describe(v) +
          " is not floating-point; optimizers update float32 and float64 variables only");
    }
    if (!grads[i].defined()) {
      missing.push_back(&v);
      continue;
    }
    if (grads[i].dtype() != v.dtype() || !grads[i].shape().is_compatible_with(v.shape())) {
      throw InvalidArgumentError(
          name_ + ".apply_gradients: the gradient of variable " + describe(v) + " has dtype " +
          std::string(dtype_name(grads[i].dtype())) + " and shape " + grads[i].shape().to_string() +
          " (gradient " + std::to_string(i) + ")");
    }
    updated.push_back(i);
  }
  if (updated.empty()) {
    std::vector<const Variable*> all;
    for (const Variable& v : variables) all.push_back(&v);
    throw ValueError("No gradients provided for any variable: " + quoted_names(all));
  }
  if (!missing.empty()) {
    detail::log_message(LogLevel::Warning, "Gradients do not exist for variables " +
                                               quoted_names(missing) +
                                               " when minimizing the loss; they are not updated");
  }
  for (size_t i : updated) slots_of(variables[i]);

  Tensor local_step = iterations_.assign_add(1);
  Tensor rate = learning_rate_.read();
  std::vector<std::pair<DType, Tensor>> rate_by_dtype;
  for (size_t i : updated) {
    Variable variable = variables[i];
    auto cached = std::find_if(rate_by_dtype.begin(), rate_by_dtype.end(),
                               [&](const auto& p) { return p.first == variable.dtype(); });
    if (cached == rate_by_dtype.end()) {
      rate_by_dtype.emplace_back(variable.dtype(), cast(rate, variable.dtype()));
      cached = rate_by_dtype.end() - 1;
    }
    update_step(grads[i], variable, slots_of(variable), cached->second, local_step);
  }
}

}  // namespace ag::optimizers
