// Regression (gradient_array_grown_in_if, fuzz.py --gradients, seed 21 function 187): an if in
// a loop grows a dynamic-size TensorArray; the if's gradient needs the array, whose size
// changes per iteration, so the array is saved flat (stacked, its rows would not fit: a
// TensorArray.write shape error).
#include <ag/ag.h>

#include "harness.h"

static ag::Tensor fz_clip(ag::Tensor v) {
  return ag::minimum(ag::maximum(v, -32), 32);
}

// fz-begin f_21_187
ag::Tensor f_21_187_h0(ag::Tensor a, ag::Tensor n) {
  const ag::Tensor a0 = a;
  ag::Tensor u = fz_clip(a + n);
  ag::Tensor t1 = fz_clip(((a0 % 5) - n));
  u = fz_clip(-(t1 % 4));
  t1 = fz_clip((ag::abs(a) - 1) *
               ((ag::reduce_sum(t1) < 5) && (ag::reduce_sum((a0 - 1)) > -6) ? -1 : 0));
  a = fz_clip((n + (u + 3)));
  return fz_clip(a - u);
}

class f_21_187_M : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor call(ag::Tensor x, ag::Tensor n, int m) const;

 private:
  int bias_ = 2;
};
ag::Tensor f_21_187_M::call(ag::Tensor x, ag::Tensor n, int m) const {
  const ag::Tensor x0 = x;
  ag::Tensor v0 = x;
  ag::Tensor v1 = fz_clip(x * 2 + 1);
  ag::Tensor v2 = fz_clip(x - n);
  ag::TensorArray ta(x.dtype(), 0, /*dynamic_size=*/true);
  ta = ta.write(0, x);
  ta = ta.write(ta.size(), fz_clip(((x * ta.size()) - n)));
  ag::Tensor t2 = fz_clip(ag::abs(v0));
  for (auto i3 : ag::range(1, ag::Tensor(2) + 1)) {
    i3 = i3 + 1;
    if (ag::reduce_any((f_21_187_h0(x, n) % 5) >= t2)) {
      t2 = fz_clip(f_21_187_h0(x0, n));
      ta = ta.write(ta.size(), fz_clip(ag::abs(ag::maximum(x0, ta.read(ta.size() - 1)))));
      ta = ta.write(ta.size(), fz_clip(f_21_187_h0(v2, n)));
    } else {
      ag::Tensor t4 = fz_clip((f_21_187_h0(x0, n) % 4));
      t2 = fz_clip(((((ag::reduce_max(-(v2)) > 4) ||
                      (ag::reduce_sum(ag::where(ta.read(ta.size() - 1) >= v1, v0, x0)) < 5)) ||
                     (ag::reduce_min((t2 + 4)) >= -1))
                        ? ((f_21_187_h0(v0, n) + ta.size()) - m)
                        : ((x - t4) - ta.size())));
    }
  }
  return v0 + v1 * 3 - v2 * 5 + ag::reduce_sum(ta.stack()) + ta.size() * 7;
}
static ag::Tensor f_21_187(ag::Tensor x, ag::Tensor n, int m) {
  static f_21_187_M module;
  return module.call(x, n, m);
}
// fz-end f_21_187

static const FzCase fz_cases[] = {
    {"f_21_187",
     &f_21_187,
     -1,
     {{ag::float32, {}, {3}, 0, 2},
      {ag::float32, {3}, {0, 3, 4}, 2, 1},
      {ag::float64, {3}, {1, -1, 1}, 1, 0},
      {ag::float32, {}, {-1}, 2, 2}}},
};

int main(int argc, char** argv) {
  return fz_run(fz_cases, argc, argv);
}
