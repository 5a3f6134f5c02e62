#include <ag/ag.h>

namespace model {

AG_FUNCTION ag::Tensor scale(ag::Tensor x, int factor = 2) { return x * factor; }

AG_FUNCTION
static ag::Tensor relu(const ag::Tensor& x) {
  if (x > 0) {
    return x;
  }
  return ag::constant(0.0);
}

AG_FUNCTION void train(ag::Variable& w, int num_steps) {
  for (int step = 0; step < num_steps; ++step) {  // unrolled at trace time
    w.assign(w.read() * 2);
  }
}

}  // namespace model
