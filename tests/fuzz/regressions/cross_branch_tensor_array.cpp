// Regression (cross_branch_tensor_array): a TensorArray written in the then-branch, its size read
// in the else-branch.
#include <ag/ag.h>

#include "harness.h"

static ag::Tensor fz_clip(ag::Tensor v) {
  return ag::minimum(ag::maximum(v, -32), 32);
}

// fz-begin cross_branch_tensor_array
AG_FUNCTION ag::Tensor cross_branch_tensor_array(ag::Tensor x, ag::Tensor n, int m) {
  ag::TensorArray ta(x.dtype(), 0, /*dynamic_size=*/true);
  ta = ta.write(0, x);
  ag::Tensor s = x;
  if (ag::reduce_sum(x) > 0) {
    ta = ta.write(1, x);
  } else {
    s = x + ta.size();
  }
  return s;
}
// fz-end cross_branch_tensor_array

static const FzCase fz_cases[] = {
    {"cross_branch_tensor_array",
     &cross_branch_tensor_array,
     2,
     {{ag::int32, {3}, {1, 2, 3}, 2, 0}, {ag::float32, {}, {-2}, 2, 0}}},
};

int main(int argc, char** argv) {
  return fz_run(fz_cases, argc, argv);
}
