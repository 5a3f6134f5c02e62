// All outputs of a function must be return values (tf.function guide).
//
// While leaky_function is traced, `a + 1` is a symbolic tensor: a node of the
// graph being built, with no value. Storing it in a global "leaks" it: using
// it after the trace is an error that names the function it leaked from, and
// so is capturing it in another function. The result that went through
// `return` is fine.
//
// agc reports these leaks when it transpiles this file (error
// ag-tensor-leak); the NOLINT comments let them through, to show what
// happens at run time.
#include <iostream>

#include <ag/ag.h>

#include "example_util.h"

ag::Tensor x;

AG_FUNCTION ag::Tensor leaky_function(ag::Tensor a) {
  x = a + 1;  // Bad - leaks local tensor NOLINT(ag-tensor-leak)
  return a + 2;
}

AG_FUNCTION ag::Tensor leaky_function_returning_x(ag::Tensor a) {
  x = a + 1;  // Bad - leaks local tensor NOLINT(ag-tensor-leak)
  return x;   // Good - uses local tensor NOLINT(ag-frozen-value)
}

AG_FUNCTION ag::Tensor captures_leaked_tensor(ag::Tensor b) {
  b += x;  // Bad - `x` is leaked from `leaky_function_returning_x` NOLINT(ag-frozen-value)
  return b;
}

int main() {
  ag::Tensor correct_a = leaky_function(ag::constant(1));
  std::cout << correct_a.values_string() << "\n";  // Good - value obtained from the return
  try {
    x.item<int>();  // Bad - tensor leaked from inside the function, cannot be used here
  } catch (const ag::Error& expected) {
    std::cout << expected.what() << "\n";
  }
  std::cout << "\n";

  // This is true even if the leaked value is also returned.
  correct_a = leaky_function_returning_x(ag::constant(1));
  std::cout << correct_a.values_string() << "\n";
  try {
    x.item<int>();
  } catch (const ag::Error& expected) {
    std::cout << expected.what() << "\n";
  }
  example::assert_raises<ag::Error>([] { captures_leaked_tensor(ag::constant(2)); });
}
