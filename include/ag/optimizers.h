// Optimizers as Keras names them: ag::optimizers::SGD and Adam, each with
// apply_gradients(grads, variables). An update is a few ops on ag::Variables
// (assign, assign_add, assign_sub), so it runs eagerly, or traces into the
// same graph when called inside an ag::function train step:
//
//   ag::optimizers::Adam opt({.learning_rate = 1e-3});
//   AG_FUNCTION ag::Tensor train_step(ag::Tensor x, ag::Tensor y) {
//     ag::GradientTape tape;
//     ag::Tensor loss = loss_fn(model(x), y);
//     opt.apply_gradients(tape.gradient(loss, vars), vars);
//     return loss;
//   }
//
// Slot variables (SGD's momentum, Adam's m and v) are created on a
// variable's first update, eagerly even inside a trace, so a traced train
// step must first be traced while every variable is new (or call build()
// before). An undefined gradient (a variable the loss does not depend on) is
// skipped with a warning, as Keras does; if every gradient is undefined,
// apply_gradients is a ValueError.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ag/tensor.h"
#include "ag/variable.h"

namespace ag::optimizers {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of each variable by its gradient, then `iterations` + 1.
  // grads[i] belongs to variables[i]; it must have the variable's dtype and
  // shape (an undefined Tensor skips the variable).
  void apply_gradients(const std::vector<Tensor>& grads, const std::vector<Variable>& variables);
  void apply_gradients(const std::vector<std::pair<Tensor, Variable>>& grads_and_vars);

  // Creates the slot variables of `variables` now (Keras's optimizer.build).
  void build(const std::vector<Variable>& variables);
  // The slot variables of `variable`, in the order its optimizer makes them
  // (Adam: m, v); none before its first update or build().
  std::vector<Variable> slot_variables(const Variable& variable) const;

  // The number of apply_gradients calls so far (int64, as Keras's
  // optimizer.iterations).
  const Variable& iterations() const { return iterations_; }
  // A float64 Variable, so a new rate reaches traced train steps too.
  double learning_rate() const;
  void set_learning_rate(double learning_rate);
  const std::string& name() const { return name_; }

 protected:
  Optimizer(double learning_rate, std::string name);

  // The slots of one variable, created on its first update (none by default).
  virtual std::vector<Variable> make_slots(const Variable& variable);
  // Updates `variable` by `gradient` (both of the variable's dtype).
  // `learning_rate` is cast to that dtype; `local_step` is the number of
  // this update (1 for the first), int64.
  virtual void update_step(const Tensor& gradient, Variable& variable, std::vector<Variable>& slots,
                           const Tensor& learning_rate, const Tensor& local_step) = 0;

  // A slot variable: zeros of `variable`'s dtype and shape, named
  // "<optimizer>/<variable>/<slot>".
  Variable zeros_slot(const Variable& variable, const std::string& slot) const;

 private:
  std::vector<Variable>& slots_of(const Variable& variable);

  std::string name_;
  Variable learning_rate_;
  Variable iterations_;
  std::unordered_map<uint64_t, std::vector<Variable>> slots_;  // by Variable::id()
};

struct SGDOptions {
  double learning_rate = 0.01;
  double momentum = 0.0;
  bool nesterov = false;
};

// Keras's SGD: without momentum, w -= lr * g. With momentum,
//   m = momentum * m - lr * g;  w += m  (nesterov: w += momentum * m - lr * g).
class SGD : public Optimizer {
 public:
  explicit SGD(SGDOptions options = {});
  double momentum() const { return options_.momentum; }
  bool nesterov() const { return options_.nesterov; }

 protected:
  std::vector<Variable> make_slots(const Variable& variable) override;
  void update_step(const Tensor& gradient, Variable& variable, std::vector<Variable>& slots,
                   const Tensor& learning_rate, const Tensor& local_step) override;

 private:
  SGDOptions options_;
};

struct AdamOptions {
  double learning_rate = 0.001;
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
};

// Keras's Adam: at step t,
//   m += (g - m) * (1 - beta_1);  v += (g^2 - v) * (1 - beta_2);
//   w -= lr * sqrt(1 - beta_2^t) / (1 - beta_1^t) * m / (sqrt(v) + epsilon).
class Adam : public Optimizer {
 public:
  explicit Adam(AdamOptions options = {});
  const AdamOptions& options() const { return options_; }

 protected:
  std::vector<Variable> make_slots(const Variable& variable) override;
  void update_step(const Tensor& gradient, Variable& variable, std::vector<Variable>& slots,
                   const Tensor& learning_rate, const Tensor& local_step) override;

 private:
  AdamOptions options_;
};

}  // namespace ag::optimizers
