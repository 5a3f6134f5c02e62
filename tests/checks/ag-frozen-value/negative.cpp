// ag-frozen-value: idiomatic code that must produce no finding.
#include <random>

#include <ag/ag.h>

const int kOffset = 1;
constexpr float kScale = 2.0f;
static const double kShift = 0.5;

// Reading const and constexpr globals is fine: they cannot change.
AG_FUNCTION ag::Tensor add_constants(ag::Tensor x) {
  return x * kScale + kOffset + kShift;
}

// Variables are read on every call.
ag::Variable global_bias(ag::constant(0.0f));

class Model : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor call(ag::Tensor input) {
    return input * weight_.read() + bias_ + global_bias.read() + kUnits;
  }

 private:
  static constexpr int kUnits = 4;
  ag::Variable weight_{ag::constant(5.0f)};
  ag::Variable bias_{ag::constant(1.0f)};
};

// Random numbers that are drawn on every call.
AG_FUNCTION ag::Tensor noisy(ag::Tensor v) {
  return v + ag::random_uniform(v.shape());
}

// Code that is not converted may read mutable globals and draw random numbers.
int counter = 0;
int roll() {
  static std::mt19937 engine(1);
  return counter + static_cast<int>(engine() % 6);
}

int main() {
  Model model;
  model.call(ag::constant(1.0f));
  return roll() > 100;
}
