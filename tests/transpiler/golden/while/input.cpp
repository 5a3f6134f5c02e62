#include <ag/ag.h>

// The tanh loop of the tf.function guide.
AG_FUNCTION ag::Tensor tanh_loop(ag::Tensor x) {
  ag::Tensor i = 0;
  while (ag::reduce_sum(x) > 1) {
    x = ag::tanh(x);
    i = i + 1;
  }
  return x;
}

AG_FUNCTION ag::Tensor nested(ag::Tensor x, ag::Tensor n) {
  ag::Tensor count = 0;
  while (count < n) {
    ag::Tensor tmp = x * 2;  // declared inside: never state
    while (x > tmp) {
      x = x - 1;
    }
    count = count + 1;
  }
  // A plain loop unrolls at trace time: kept as written.
  for (int k = 0; k < 3; ++k) x = x + 1;
  return x;
}
