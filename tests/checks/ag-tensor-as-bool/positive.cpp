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
