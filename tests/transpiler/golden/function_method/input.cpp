#include <ag/ag.h>

class Dense : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor operator_call(ag::Tensor x) {
    if (ag::reduce_sum(x) > 0) {
      x = ag::matmul(x, x);
    }
    return x;
  }

  AG_FUNCTION ag::Tensor shifted(ag::Tensor x, ag::Tensor shift) const { return x + shift; }
};
