// ag::optimizers::Adam (ag/optimizers.h): Keras's update rule, with the bias
// correction folded into the step size.
#include "ag/ops.h"
#include "ag/optimizers.h"

namespace ag::optimizers {

Adam::Adam(AdamOptions options) : Optimizer(options.learning_rate, "Adam"), options_(options) {}

std::vector<Variable> Adam::make_slots(const Variable& variable) {
  return {zeros_slot(variable, "m"), zeros_slot(variable, "v")};
}

void Adam::update_step(const Tensor& gradient, Variable& variable, std::vector<Variable>& slots,
                       const Tensor& learning_rate, const Tensor& local_step) {
  Tensor t = cast(local_step, variable.dtype());
  Tensor beta_1_power = pow(options_.beta_1, t);
  Tensor beta_2_power = pow(options_.beta_2, t);
  Tensor alpha = learning_rate * sqrt(1 - beta_2_power) / (1 - beta_1_power);
  Variable& m = slots[0];
  Variable& v = slots[1];
  Tensor m_new = m.assign_add((gradient - m.read()) * (1 - options_.beta_1));
  Tensor v_new = v.assign_add((square(gradient) - v.read()) * (1 - options_.beta_2));
  variable.assign_sub(m_new * alpha / (sqrt(v_new) + options_.epsilon));
}

}  // namespace ag::optimizers
