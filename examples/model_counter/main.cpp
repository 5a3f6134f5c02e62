// The Model counter pitfall (tf.function guide, "Changing Python global and
// free variables").
//
// `counter` is a C++ int, so `if (counter == 0)` is plain C++ that runs only
// while tracing: it is true then, and the assign_add it guards is recorded
// into the graph unconditionally. Every call runs that graph, so v grows by
// one per call: 1, 2, 3, not the intended 1, 1, 1.
//
// The fix here is to make the guard part of the graph: with the counter an
// ag::Variable, the `if` tests a tensor, agc stages it, and the increment runs
// only while the counter is 0: 1, 1, 1.
//
// agc warns about the pitfall (ag-frozen-value on the test of `counter`,
// ag-global-mutation on its increment); the NOLINT markers keep this demo
// quiet.
#include <iostream>

#include <ag/ag.h>

class Model : public ag::Module {
 public:
  ag::Variable v{0};
  int counter = 0;

  AG_FUNCTION ag::Tensor call() {
    if (counter == 0) {  // NOLINT(ag-frozen-value)
      // A C++ side effect.
      counter += 1;  // NOLINT(ag-global-mutation)
      v.assign_add(1);
    }
    return v.read();
  }
};

class FixedModel : public ag::Module {
 public:
  ag::Variable v{0};
  ag::Variable counter{0};

  AG_FUNCTION ag::Tensor call() {
    if (counter.read() == 0) {
      counter.assign_add(1);
      v.assign_add(1);
    }
    return v.read();
  }
};

int main() {
  Model m;
  std::cout << "Model with a C++ counter:\n";
  for (int n = 0; n < 3; ++n) std::cout << m.call().values_string() << "\n";  // prints 1, 2, 3

  FixedModel fixed;
  std::cout << "Model with an ag::Variable counter:\n";
  for (int n = 0; n < 3; ++n) std::cout << fixed.call().values_string() << "\n";  // prints 1, 1, 1
}
