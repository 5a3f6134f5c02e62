// ag-tensor-as-bool: idiomatic code that must produce no finding.
#include <ag/ag.h>

// Conditions that agc stages.
AG_FUNCTION ag::Tensor relu(ag::Tensor x) {
  if (ag::reduce_sum(x) > 0) {
    return x;
  }
  return ag::zeros_like(x);
}

AG_FUNCTION ag::Tensor logical(ag::Tensor x) {
  ag::Tensor y = x;
  if (!(x > 0) || (x < -10 && x > -20)) {
    y = -x;
  }
  while (y > 100) y = y / 2;
  return y;
}

AG_FUNCTION ag::Tensor checked(ag::Tensor x) {
  ag::assert_that(ag::reduce_min(x > 0), "x must be positive");
  return x;
}

// A tensor ?: that agc stages: its result is a tensor or feeds a tensor operator.
AG_FUNCTION ag::Tensor conditionals(ag::Tensor x) {
  ag::Tensor sign = x > 0 ? ag::Tensor(1) : ag::Tensor(-1);
  ag::Tensor y = x > 10 ? x : 0;
  return sign * y + (x > 5 ? 100 : 200) + y * (x < 0 ? (x < -5 ? 1 : 2) : 3);
}

// `&&`, `||` and `!` that agc converts: their value is used as a tensor.
AG_FUNCTION ag::Tensor short_circuits(ag::Tensor x, ag::Tensor n, int count) {
  ag::Tensor i = 0;
  while (i < n && ag::gather(x, i) > 0) i += 1;
  ag::Tensor ok = i > 0 && i < n;
  auto any = i > 1 || ok;
  ag::Tensor r = (ok && any) ? i : n;
  if (count > 0 && 10 / count > r) r += 1;
  return ag::where(ok || any, r, i) + ag::cast(!(ok && any), ag::int32);
}

// A C++ bool that is not a tensor.
AG_FUNCTION ag::Tensor scalar_flag(ag::Tensor x, bool negate) {
  bool flip = static_cast<bool>(negate);
  return flip ? -x : x;
}

// Eager code may test tensors.
bool is_positive(const ag::Tensor& t) {
  return static_cast<bool>(t > 0);
}

int main() {
  return is_positive(ag::constant(1)) ? 0 : 1;
}
