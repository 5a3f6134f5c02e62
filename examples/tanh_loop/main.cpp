// A simple loop (tf.function guide, "AutoGraph transformations").
//
// The while condition is a tensor, so agc turns the loop into
// ag::while_stmt: one While node whose body is traced once and runs as many
// times as the data asks. ag::print runs on every iteration; the input is
// random with a fixed seed.
#include <iostream>

#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  while (ag::reduce_sum(x) > 1) {
    ag::print(x);
    x = ag::tanh(x);
  }
  return x;
}

int main() {
  ag::Tensor x = ag::random_uniform({5}, 0.0, 1.0, ag::float32, /*seed=*/1);
  std::cout << f(x) << "\n";
  std::cout << "traces of f: " << ag::function_of(&f).tracing_count() << "\n";
}
