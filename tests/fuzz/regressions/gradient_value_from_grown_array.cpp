// Regression (gradient_value_from_grown_array, fuzz.py --gradients, seed 22 function 13): two
// nested do-whiles reading a dynamic-size TensorArray the outer one grows; the inner loop's
// gradient starts the array's gradient from zeros computed from the array, whose row count
// changes per iteration of the outer loop. Values computed from a varying one are saved flat
// (runtime/control/varying_rows.h): stacked by rows, they would not fit (a TensorArray.write
// shape error).
#include <ag/ag.h>

#include "harness.h"

static ag::Tensor fz_clip(ag::Tensor v) {
  return ag::minimum(ag::maximum(v, -32), 32);
}

// fz-begin f_22_13
class f_22_13_M : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor call(ag::Tensor x, ag::Tensor n, int m) const;

 private:
  int bias_ = 0;
};
ag::Tensor f_22_13_M::call(ag::Tensor x, ag::Tensor n, int m) const {
  const ag::Tensor x0 = x;
  ag::Tensor v0 = x;
  ag::Tensor v1 = fz_clip(x * 2 + 1);
  ag::Tensor v2 = fz_clip(x - n);
  ag::TensorArray ta(x.dtype(), 0, /*dynamic_size=*/true);
  ta = ta.write(0, x);
  v0 = fz_clip(
      ((!(ag::reduce_min(v2) < -1)) ? (ag::minimum(v1, ta.read(ta.size() - 1)) + bias_) : -(x0)));
  ag::Tensor w1 = 0;
  do {
    w1 += 1;
    ag::Tensor w2 = 0;
    do {
      w2 += 1;
      v2 = fz_clip(((ag::reduce_all((v0 + v0) != v1)) ? ((v0 + ta.size()) + n)
                                                      : ag::where(x0 == v2, v1, ag::abs(v1))));
      v2 = fz_clip(((((w1 != 3) || (w2 > 3)) || (ag::reduce_sum(x) == -3))
                        ? (w2 + ag::minimum(ta.read(ta.size() - 1), 1))
                        : (x0 * bias_)));
      v1 = fz_clip(ag::maximum((w2 + v2), (x0 % 3)));
    } while (w2 < n);
    ta = ta.write(ta.size(), fz_clip(ag::abs(ag::where(x0 == x0, x0, v1))));
    v1 = fz_clip((v0 - ag::floordiv(x, 2)));
  } while (w1 < ag::Tensor(2));
  return v0 + v1 * 3 - v2 * 5 + ag::reduce_sum(ta.stack()) + ta.size() * 7;
}
static ag::Tensor f_22_13(ag::Tensor x, ag::Tensor n, int m) {
  static f_22_13_M module;
  return module.call(x, n, m);
}
// fz-end f_22_13

static const FzCase fz_cases[] = {
    {"f_22_13",
     &f_22_13,
     -1,
     {{ag::int32, {}, {-1}, 4, 2},
      {ag::float64, {3}, {-2, 4, -1}, 2, 2},
      {ag::float32, {3}, {3, -2, 1}, 0, 1},
      {ag::int32, {}, {-4}, 1, 1}}},
};

int main(int argc, char** argv) {
  return fz_run(fz_cases, argc, argv);
}
