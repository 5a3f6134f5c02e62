// The user's code: three functions marked for agc.
#include "user_function.h"

AG_FUNCTION ag::Tensor power(ag::Tensor x, int y) {
  ag::Tensor result = ag::eye(10, ag::int32);
  for (int i = 0; i < y; ++i) {  // an int loop: unrolled while tracing
    result = ag::matmul(x, result);
  }
  return result;
}

AG_FUNCTION ag::Tensor tanh_loop(ag::Tensor x) {
  while (ag::reduce_sum(x) > 1) {  // a tensor condition: becomes a While node
    x = ag::tanh(x);
  }
  return x;
}

AG_FUNCTION ag::Tensor mean_squared_error(ag::Tensor a, ag::Tensor b) {
  return ag::reduce_mean(ag::square(a - b));  // fused into one loop in the graph
}
