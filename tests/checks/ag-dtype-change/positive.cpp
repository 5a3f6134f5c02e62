#include <ag/ag.h>

// A running mean: the sum starts as an int32 tensor, and adding a float
// scalar makes it float32 after one iteration.
AG_FUNCTION ag::Tensor running_mean(ag::Tensor x) {
  ag::Tensor sum = 0;
  ag::Tensor count = 0;
  while (count < x) {
    sum = sum + 0.5 * ag::cast(count, ag::float32);
    count += 1;
  }
  return sum / count;
}

// Compound assignment with a float, in a C-style loop with a tensor bound.
AG_FUNCTION ag::Tensor damped(ag::Tensor n) {
  ag::Tensor energy = ag::constant(int64_t{100});
  for (ag::Tensor i = 0; i < n; ++i) {
    energy *= 0.9f;
  }
  return energy;
}

// Halving an integer tensor: '/' of integers is true division.
AG_FUNCTION ag::Tensor halvings(ag::Tensor x) {
  int start = 64;
  ag::Tensor size = start;
  while (size > x) {
    size = size / 2;
  }
  return size;
}

// One branch of a staged if makes it float, the other leaves it int32.
AG_FUNCTION ag::Tensor scaled(ag::Tensor x) {
  ag::Tensor factor = 1;
  if (ag::reduce_sum(x) > 0) {
    factor = 2.5;
  }
  return x * ag::cast(factor, ag::float32);
}

int main() {
  running_mean(ag::constant(3));
  damped(ag::constant(3));
  halvings(ag::constant(3));
  scaled(ag::constant({1.0f}));
}
