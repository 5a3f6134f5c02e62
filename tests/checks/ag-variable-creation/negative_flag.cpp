#include <ag/ag.h>

#include <optional>

// Create-once under a bool flag member. (ag-frozen-value and
// ag-global-mutation report the flag itself, so this case runs alone.)
class Scaler : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor operator_call(ag::Tensor x) {
    if (!built_) {
      s_.emplace(2.0);
      built_ = true;
    }
    return x * s_->read();
  }

 private:
  std::optional<ag::Variable> s_;
  bool built_ = false;
};

int main() {
  Scaler scaler;
  scaler.operator_call(ag::constant(1.0));
}
