#include "model.h"

#include <iostream>

AG_FUNCTION ag::Tensor tanh_loop(ag::Tensor x) {
  std::cout << "Tracing tanh_loop with " << x << "\n";
  while (ag::reduce_sum(x) > 1) {  // a tensor condition: staged by agc
    x = ag::tanh(x);
  }
  return x;
}
