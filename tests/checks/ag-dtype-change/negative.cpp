#include <ag/ag.h>

// Started as a float: adding a float keeps float32.
AG_FUNCTION ag::Tensor float_sum(ag::Tensor n) {
  ag::Tensor sum = 0.0f;
  ag::Tensor i = 0;
  while (i < n) {
    sum = sum + 0.5;
    i = i + 1;
  }
  return sum;
}

// Integer steps keep int32; floordiv is integer division.
AG_FUNCTION ag::Tensor int_steps(ag::Tensor x) {
  ag::Tensor size = 64;
  while (size > x) {
    size = ag::floordiv(size, 2);
    size -= 1;
  }
  return size;
}

// Both branches make it float32: the if gives it one dtype.
AG_FUNCTION ag::Tensor both_branches(ag::Tensor x) {
  ag::Tensor factor = 1;
  if (ag::reduce_sum(x) > 0) {
    factor = 2.5;
  } else {
    factor = 0.5;
  }
  return x * factor;
}

// A variable declared inside the loop body lives for one iteration.
AG_FUNCTION ag::Tensor scratch(ag::Tensor n) {
  ag::Tensor total = 0.0f;
  while (n > 0) {
    ag::Tensor step = 1;
    step = step * 0.5;
    total = total + step;
    n = n - 1;
  }
  return total;
}

// Outside staged control flow the dtype may change freely.
AG_FUNCTION ag::Tensor straight_line(ag::Tensor x) {
  ag::Tensor scale = 2;
  scale = scale * 1.5;
  for (int i = 0; i < 3; ++i) scale = scale / 2;
  return x * scale;
}

// A cast makes the float explicit and keeps the dtype.
AG_FUNCTION ag::Tensor cast_back(ag::Tensor n) {
  ag::Tensor k = 0;
  while (k < n) {
    k = ag::cast(k * 1.5 + 1, ag::int32);
  }
  return k;
}

int main() {
  float_sum(ag::constant(3));
  int_steps(ag::constant(3));
  both_branches(ag::constant({1.0f}));
  scratch(ag::constant(3));
  straight_line(ag::constant(1.0f));
  cast_back(ag::constant(3));
}
