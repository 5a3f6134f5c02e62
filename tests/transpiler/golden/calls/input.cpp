// Calls from converted code, in the style of AutoGraph's call_to_user_function
// and call_to_lambda_function tests: helpers defined in this file are
// converted too (recursively), unmarked lambdas inside a marked function
// (generic ones too) are staged with it, and a helper called from a staged
// loop body is traced into it.
#include <ag/ag.h>

#include <iostream>

ag::Tensor clipped(ag::Tensor x, ag::Tensor limit) {
  if (x > limit) return limit;
  return x;
}

ag::Tensor halve_while_big(ag::Tensor x) {
  while (x > 10) x = ag::floordiv(x, 2);
  return x;
}

AG_FUNCTION ag::Tensor user_functions(ag::Tensor x) {
  ag::Tensor total = 0;
  for (auto i : ag::range(x)) total += clipped(i, ag::Tensor(3));
  return total + halve_while_big(x * 7);
}

AG_FUNCTION ag::Tensor local_lambda(ag::Tensor x) {
  auto sign = [](ag::Tensor v) {
    ag::Tensor s = 0;
    if (v > 0) {
      s = 1;
    } else if (v < 0) {
      s = -1;
    }
    return s;
  };
  ag::Tensor acc = 0;
  ag::Tensor i = -x;
  while (i <= x) {
    acc += sign(i) * i;
    i += 1;
  }
  return acc;
}

// A generic lambda: its `if` is staged when it is called with a tensor.
AG_FUNCTION ag::Tensor generic_lambda(ag::Tensor x) {
  auto clamp_low = [](auto v, auto low) {
    auto out = v;
    if (v < low) out = low;
    return out;
  };
  return clamp_low(x, ag::Tensor(2)) + clamp_low(1, 0);
}

int main() {
  auto marked = [](ag::Tensor x) AG_FUNCTION {
    ag::Tensor y = x;
    if (ag::reduce_sum(x) > 0) y = -x;
    return y;
  };
  for (int x : {0, 1, 2, 5}) {
    std::cout << x << ": " << user_functions(ag::Tensor(x)).item<int>() << " "
              << local_lambda(ag::Tensor(x)).item<int>() << " "
              << generic_lambda(ag::Tensor(x)).item<int>() << " "
              << marked(ag::Tensor(x) - 1).item<int>() << "\n";
  }
}
