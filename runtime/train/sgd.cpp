// ag::optimizers::SGD (ag/optimizers.h): Keras's update rule, with optional
// momentum and Nesterov momentum.
#include "ag/ops.h"
#include "ag/optimizers.h"

namespace ag::optimizers {

SGD::SGD(SGDOptions options) : Optimizer(options.learning_rate, "SGD"), options_(options) {
  if (options.momentum < 0 || options.momentum > 1)
    throw ValueError("SGD: `momentum` must be between [0, 1], got " +
                     Tensor(options.momentum).values_string());
}

std::vector<Variable> SGD::make_slots(const Variable& variable) {
  if (options_.momentum == 0) return {};
  return {zeros_slot(variable, "momentum")};
}

void SGD::update_step(const Tensor& gradient, Variable& variable, std::vector<Variable>& slots,
                      const Tensor& learning_rate, const Tensor&) {
  if (slots.empty()) {
    variable.assign_sub(gradient * learning_rate);
    return;
  }
  Variable& m = slots[0];
  Tensor step = gradient * learning_rate;
  Tensor m_new = m.assign(m.read() * options_.momentum - step);
  variable.assign_add(options_.nesterov ? m_new * options_.momentum - step : m_new);
}

}  // namespace ag::optimizers
