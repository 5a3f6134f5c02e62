#include <ag/ag.h>

// Recursion in a helper that marked code never calls: not converted.
int factorial(int n) {
  return n <= 1 ? 1 : n * factorial(n - 1);
}

ag::Tensor eager_power(ag::Tensor x, int n) {
  return n == 0 ? ag::constant(1.0) : x * eager_power(x, n - 1);
}

// A recursive helper on C++ values only: marked code calls it, but it takes
// and returns no tensor, so it is ordinary C++ at trace time.
int fib(int n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

ag::Tensor scale(ag::Tensor x) {
  return x * 2;
}

// Marked functions calling each other without a cycle.
AG_FUNCTION ag::Tensor inner(ag::Tensor x) {
  return scale(x) + fib(5);
}

AG_FUNCTION ag::Tensor outer(ag::Tensor x) {
  ag::Tensor y = inner(x);
  for (auto i : ag::range(ag::reduce_sum(x))) {
    y = inner(y) + ag::cast(i, ag::float32);
  }
  return y;
}

int main() {
  outer(ag::constant({1.0, 2.0}));
  eager_power(ag::constant(2.0), factorial(3));
}
