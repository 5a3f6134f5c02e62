// Marked templates as code bases write them: a default template argument, a
// forwarding parameter (deduced as a reference from an lvalue, as a value
// from an rvalue) and a template parameter pack.
#include <ag/ag.h>

#include <iostream>

template <class T = ag::Tensor>
AG_FUNCTION T twice_if_positive(T x) {
  if (x > 0) x = x * 2;
  return x;
}

template <class T>
AG_FUNCTION ag::Tensor plus_one_if_positive(T&& x) {
  ag::Tensor y = x;
  if (y > 0) y = y + 1;
  return y;
}

template <class... Ts>
AG_FUNCTION ag::Tensor sum_while_small(ag::Tensor x, Ts... rest) {
  ag::Tensor total = (x + ... + rest);
  while (total < 10) total = total * 2;
  return total;
}

int main() {
  ag::Tensor three(3.0f);
  std::cout << twice_if_positive(ag::Tensor(2.0f)) << " " << twice_if_positive<>(ag::Tensor(-2.0f))
            << "\n";
  std::cout << plus_one_if_positive(three) << " " << plus_one_if_positive(ag::Tensor(-3.0f)) << "\n";
  std::cout << sum_while_small(three) << " " << sum_while_small(three, ag::Tensor(1.0f), three)
            << "\n";
}
