#include <ag/ag.h>

#include <memory>
#include <optional>

// The TensorFlow guide's Count module: the variable is created once, on the first
// trace, under a guard that tests it.
class Count : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor operator_call() {
    if (!count_) count_.emplace(0);
    return count_->assign_add(1);
  }

 private:
  std::optional<ag::Variable> count_;
};

// The same with a pointer, and with an early return.
class Lazy : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor operator_call(ag::Tensor x) {
    if (w_ == nullptr) {
      w_ = std::make_unique<ag::Variable>(ag::random_normal({2, 2}));
    }
    return ag::matmul(x, w_->read()) + bias(x);
  }

  AG_FUNCTION ag::Tensor bias(ag::Tensor x) {
    if (b_.has_value()) return x + b_->read();
    b_ = ag::Variable(0.5);
    return x + b_->read();
  }

 private:
  std::unique_ptr<ag::Variable> w_;
  std::optional<ag::Variable> b_;
};

// A static local is initialized once; copies and references create nothing.
AG_FUNCTION ag::Tensor steps(ag::Tensor x) {
  static ag::Variable step(0);
  ag::Variable alias = step;
  alias.assign_add(1);
  return x + ag::cast(step.read(), ag::float64);
}

AG_FUNCTION void train(ag::Variable& w, ag::Tensor g) {
  w.assign_sub(g * 0.1);
}

// Variables created outside marked code are ordinary.
ag::Variable global_w(1.0);

int main() {
  ag::Variable w(ag::constant(1.0));
  train(w, ag::constant(0.5));
  Count c;
  c.operator_call();
  Lazy lazy;
  lazy.operator_call(ag::constant({{1.0, 2.0}}));
  steps(ag::constant(1.0));
}
