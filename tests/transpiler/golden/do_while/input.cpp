// do/while with a tensor condition: the body runs once before the first test
// (a first-pass flag joins the condition), with break, continue (to the test)
// and return inside; a do/while on a C++ condition stays C++.
#include <ag/ag.h>
#include <iostream>

AG_FUNCTION ag::Tensor do_basic(ag::Tensor x) {
  ag::Tensor steps = 0;
  do {
    x = x - 3;
    steps += 1;
  } while (x > 0);
  return steps * 100 + x;
}

AG_FUNCTION ag::Tensor do_jumps(ag::Tensor n) {
  ag::Tensor i = 0, s = 0;
  do {
    i += 1;
    if (i % 2 == 0) continue;
    if (s > 20) break;
    s += i;
  } while (i < n);
  return s * 100 + i;
}

AG_FUNCTION ag::Tensor do_return(ag::Tensor n) {
  ag::Tensor i = n;
  do {
    if (i == 4) return i * 1000;
    i -= 1;
  } while (i > 0);
  return i;
}

AG_FUNCTION ag::Tensor do_plain(ag::Tensor x) {
  int k = 0;
  do {
    x = x * 2;
    ++k;
  } while (k < 3);
  return x;
}

int main() {
  for (int n : {-5, 0, 1, 4, 7, 30})
    std::cout << do_basic(ag::Tensor(n)).item<int>() << " " << do_jumps(ag::Tensor(n)).item<int>()
              << " " << do_return(ag::Tensor(n)).item<int>() << " "
              << do_plain(ag::Tensor(n)).item<int>() << "\n";
}
