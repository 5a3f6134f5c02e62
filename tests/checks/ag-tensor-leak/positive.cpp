#include <ag/ag.h>

#include <map>
#include <optional>
#include <vector>

// The TensorFlow guide's leaky_function: a tensor assigned to a global.
ag::Tensor x;

AG_FUNCTION ag::Tensor leaky_function(ag::Tensor a) {
  x = a + 1;  // leaks the symbolic tensor
  return a + 2;
}

// Mutating an external collection or object.
struct MyClass {
  ag::Tensor field;
};
std::vector<ag::Tensor> external_list;
MyClass external_object;

AG_FUNCTION void leaky_collections() {
  ag::Tensor a = ag::constant(1);
  external_list.push_back(a);
  external_object.field = a;
}

// A static local, an out-parameter and a member.
AG_FUNCTION ag::Tensor cached(ag::Tensor a) {
  static ag::Tensor last = a * 2;
  return last;
}

AG_FUNCTION void out_param(ag::Tensor a, ag::Tensor& out) {
  out = ag::tanh(a);
}

AG_FUNCTION void out_pointer(ag::Tensor a, std::vector<ag::Tensor>* outs) {
  outs->push_back(a);
}

class Model : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor operator_call(ag::Tensor input) {
    activations_[0] = ag::tanh(input);
    last_ = input;
    return activations_[0];
  }

 private:
  std::map<int, ag::Tensor> activations_;
  std::optional<ag::Tensor> last_;
};

// A marked lambda writing through a by-reference capture.
int main() {
  ag::Tensor captured;
  std::vector<ag::Tensor> history;
  auto step = [&](ag::Tensor a) AG_FUNCTION {
    captured = a + 1;
    auto& alias = history;
    alias.emplace_back(a);
    return a;
  };
  step(ag::constant(1.0));
}
