// `&&` and `||` with tensor operands short-circuit in every position, as in
// C++ and AutoGraph: agc lowers them to ag::and_ / ag::or_, whose right side
// runs only when the left does not decide (a branch of an If node in a graph).
// Each function is called with inputs where evaluating the right side would
// fail (an index past the end, an integer division by zero).
#include <ag/ag.h>

#include <iostream>

// The while-condition shape: the element read is guarded by the bound.
AG_FUNCTION ag::Tensor leading_positives(ag::Tensor x, ag::Tensor n) {
  ag::Tensor i = 0;
  while (i < n && ag::gather(x, i) > 0) i += 1;
  return i;
}

// The same guard in a C-style for and an `||` (stop at the end or a zero).
AG_FUNCTION ag::Tensor sum_to_zero(ag::Tensor x, ag::Tensor n) {
  ag::Tensor s = 0;
  for (ag::Tensor i = 0; !(i >= n || ag::gather(x, i) == 0); i += 1) s += ag::gather(x, i);
  return s;
}

// A C++ int guard before a division: `count > 0` decides at trace time.
AG_FUNCTION ag::Tensor average_above(int total, int count, ag::Tensor t) {
  ag::Tensor r = 0;
  if (count > 0 && total / count > t) r = 1;
  return r;
}

// The same guard on tensors: floordiv by a zero tensor would be an error.
AG_FUNCTION ag::Tensor tensor_average_above(ag::Tensor total, ag::Tensor count, ag::Tensor t) {
  ag::Tensor r = 0;
  if (count > 0 && ag::floordiv(total, count) > t) r = 1;
  return r;
}

// Initialisers, `?:`, arguments and `return`.
AG_FUNCTION ag::Tensor positions(ag::Tensor a, ag::Tensor b, ag::Tensor c) {
  ag::Tensor both = a > 0 && b > 0;
  auto either = a > 0 || b > 0;
  ag::Tensor picked = (a > 0 && c > 0) ? a : c;
  ag::Tensor counted = ag::cast(b > 0 || c > 0, ag::int32) + ag::cast(either, ag::int32);
  if (either && !both) picked += 100;
  return ag::stack({ag::cast(both, ag::int32), picked, counted,
                    ag::cast(a > 0 && (b > 0 || c > 0), ag::int32)});
}

AG_FUNCTION ag::Tensor any_positive(ag::Tensor a, ag::Tensor b) {
  return a > 0 || b > 0;
}

// A C++ bool operand on either side.
AG_FUNCTION ag::Tensor mixed(ag::Tensor a, bool flag) {
  ag::Tensor r = 0;
  if (flag && a > 0) r += 1;
  if (a > 0 && flag) r += 10;
  if (!flag || a < 0) r += 100;
  return r;
}

int main() {
  ag::Tensor x = ag::constant({3, 1, 4});
  ag::Tensor y = ag::constant({2, -1, 5});
  ag::Tensor z = ag::constant({7, 0, 1});
  ag::Tensor n(3);
  std::cout << "leading_positives " << leading_positives(x, n).item<int>() << " "
            << leading_positives(y, n).item<int>() << "\n";
  std::cout << "sum_to_zero " << sum_to_zero(x, n).item<int>() << " "
            << sum_to_zero(z, n).item<int>() << "\n";
  for (int count : {0, 2, 5})
    std::cout << "average_above(10, " << count
              << ") = " << average_above(10, count, ag::Tensor(3)).item<int>() << " "
              << tensor_average_above(ag::Tensor(10), ag::Tensor(count), ag::Tensor(3)).item<int>()
              << "\n";
  for (int a : {-1, 1})
    for (int b : {-1, 1})
      for (int c : {-1, 1})
        std::cout << "positions(" << a << ", " << b << ", " << c << ") = "
                  << positions(ag::Tensor(a), ag::Tensor(b), ag::Tensor(c)).values_string() << " "
                  << any_positive(ag::Tensor(a), ag::Tensor(b)).item<bool>() << "\n";
  for (int a : {-1, 1})
    for (bool flag : {false, true})
      std::cout << "mixed(" << a << ", " << flag << ") = " << mixed(ag::Tensor(a), flag).item<int>()
                << "\n";
}
