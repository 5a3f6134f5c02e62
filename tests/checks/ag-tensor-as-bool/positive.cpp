// ag-tensor-as-bool: a traced tensor has no value to turn into a C++ bool.
#include <cassert>

#include <ag/ag.h>

AG_FUNCTION ag::Tensor clip(ag::Tensor x) {
  if (static_cast<bool>(ag::reduce_sum(x) > 0)) {
    return x;
  }
  return -x;
}

AG_FUNCTION ag::Tensor flag(ag::Tensor x) {
  bool positive(x > 0);
  bool negative = (bool)(x < 0);
  return positive && !negative ? x : x * 0;
}

AG_FUNCTION ag::Tensor checked(ag::Tensor x) {
  assert(ag::reduce_min(x > 0));
  return x;
}

AG_FUNCTION ag::Tensor read(ag::Tensor x) {
  if (x.item<bool>()) return x;
  return x + 1;
}

// A tensor ?: whose C++ result stays C++: agc does not stage it.
AG_FUNCTION ag::Tensor repeat(ag::Tensor x) {
  int times = x > 0 ? 2 : 3;
  return x * times;
}

// A tensor `&&` whose result must be a C++ bool: agc keeps C++'s `&&`, which
// turns the tensors into bools; one finding for the whole expression.
AG_FUNCTION ag::Tensor both_positive(ag::Tensor x, ag::Tensor y) {
  bool ok = x > 0 && (y > 0 || x > 10);
  return ok ? x : y;
}

AG_FUNCTION ag::Tensor count_if(ag::Tensor x, int& count) {
  count += x > 0 || x < -10;
  return x;
}
