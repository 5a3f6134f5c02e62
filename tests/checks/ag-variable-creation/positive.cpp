#include <ag/ag.h>

#include <memory>
#include <optional>
#include <vector>

// The TensorFlow guide's f: a variable created on every call.
AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  ag::Variable v(1.0);
  return v.read() + x;
}

class Dense : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor operator_call(ag::Tensor x) {
    // Created on every trace: no guard.
    w_.emplace(ag::random_normal({2, 2}));
    bias_ = std::make_unique<ag::Variable>(0.0);
    // A guard on something else does not make it create-once.
    if (scale_ > 1) extra_.push_back(ag::Variable(1.0));
    return ag::matmul(x, w_->read()) + bias_->read();
  }

 private:
  std::optional<ag::Variable> w_;
  std::unique_ptr<ag::Variable> bias_;
  std::vector<ag::Variable> extra_;
  int scale_ = 2;
};

// A temporary variable passed along.
ag::Tensor use(const ag::Variable& v) {
  return v.read();
}

AG_FUNCTION ag::Tensor temporary(ag::Tensor x) {
  return x + use(ag::Variable(x));
}

int main() {
  f(ag::constant(1.0));
  Dense dense;
  dense.operator_call(ag::constant({{1.0, 2.0}}));
  temporary(ag::constant(1.0));
}
