// ag-global-mutation: idiomatic code that must produce no finding.
#include <vector>

#include <ag/ag.h>

const int kSteps = 3;
constexpr double kScale = 2.0;

// State that changes on every call is an ag::Variable.
class Counter : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor step(ag::Tensor x) {
    count_.assign_add(1);
    return x + count_.read();
  }

 private:
  ag::Variable count_{ag::constant(0)};
};

// Locals, parameters and reference parameters of converted code.
AG_FUNCTION ag::Tensor local_state(ag::Tensor x) {
  int steps = 0;
  std::vector<int> sizes;
  for (int i = 0; i < kSteps; ++i) {
    steps += 1;
    sizes.push_back(i);
  }
  return x * kScale + steps;
}

// A helper that is converted because marked code calls it: its writes are to
// its caller's locals.
void bump(ag::Tensor& x, int& n) {
  x = x + 1;
  n += 1;
}

AG_FUNCTION ag::Tensor uses_helper(ag::Tensor x) {
  int n = 0;
  bump(x, n);
  return x;
}

// Hand-written staged code: the lambdas write locals of the marked function.
AG_FUNCTION ag::Tensor staged(ag::Tensor x) {
  ag::while_stmt([&] { return ag::reduce_sum(x) > 1; }, [&] { x = ag::tanh(x); },
                 ag::state({"x"}, x));
  return x;
}

// Code that is not converted may write globals.
int runs = 0;
void not_marked() {
  ++runs;
}

int main() {
  not_marked();
  return 0;
}
