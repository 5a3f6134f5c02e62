// Basic loops in the style of AutoGraph's loop_basic tests: loops with no
// carried locals (only a Variable), one and two loop variables, successive
// loops, and nested loops that fill a TensorArray.
#include <ag/ag.h>

#include <iostream>

AG_FUNCTION ag::Tensor while_no_vars(ag::Tensor n, ag::Variable& v) {
  v.assign(0);
  while (v.read() < n) v.assign_add(1);
  return v.read();
}

AG_FUNCTION ag::Tensor for_no_vars(ag::Tensor l, ag::Variable& v) {
  v.assign(0);
  for (auto c : l) v.assign_add(1);
  return v.read();
}

AG_FUNCTION ag::Tensor while_one_var(ag::Tensor n) {
  ag::Tensor i = 0;
  while (i < n) i = i * 10 + 1;
  return i;
}

AG_FUNCTION ag::Tensor while_two_vars(ag::Tensor n) {
  ag::Tensor s = 0;
  ag::Tensor i = 0;
  while (i < n) {
    s = s * 10 + i;
    i += 1;
  }
  return s;
}

AG_FUNCTION ag::Tensor for_two_vars(ag::Tensor l) {
  ag::Tensor s = 0;
  for (auto i : l) s = s * 10 + i;
  return s;
}

AG_FUNCTION ag::Tensor successive_while_loops(ag::Tensor n1, ag::Tensor n2) {
  ag::Tensor s = 0;
  ag::Tensor i = 0;
  while (i < n1) {
    s = s * 10 + i;
    i += 1;
  }
  i = 0;
  while (i < n2) {
    s = s * 10 + i;
    i += 1;
  }
  return s;
}

AG_FUNCTION ag::Tensor successive_for_loops(ag::Tensor l1, ag::Tensor l2) {
  ag::Tensor s = 0;
  for (auto i : l1) s = s * 10 + i;
  for (auto i : l2) s = s * 10 + i;
  return s;
}

AG_FUNCTION ag::Tensor nested_while_loops(ag::Tensor n1, ag::Tensor n2) {
  ag::Tensor i = 0;
  ag::TensorArray l(ag::int32, 0, /*dynamic_size=*/true);
  while (i < n1) {
    ag::Tensor j = 0;
    ag::Tensor s = 0;
    while (j < n2) {
      s = s * 10 + i * j;
      j += 1;
    }
    l = l.write(i, s);
    i += 1;
  }
  return l.stack();
}

AG_FUNCTION ag::Tensor nested_for_loops(ag::Tensor m) {
  ag::TensorArray l(ag::int32, 0, /*dynamic_size=*/true);
  for (auto row : m) {
    ag::Tensor s = 0;
    for (auto j : row) s = s * 10 + j;
    l = l.write(l.size(), s);
  }
  return l.stack();
}

int main() {
  ag::Variable v(0);
  for (int n = 0; n <= 2; ++n) {
    std::cout << "n=" << n << ": " << while_no_vars(ag::Tensor(n), v).item<int>() << " "
              << while_one_var(ag::Tensor(n)).item<int>() << " "
              << while_two_vars(ag::Tensor(n)).item<int>() << "\n";
  }
  const ag::Tensor lists[] = {ag::zeros({0}, ag::int32), ag::constant({1}), ag::constant({1, 2})};
  for (const ag::Tensor& l : lists) {
    std::cout << "l=" << l.shape() << ": " << for_no_vars(l, v).item<int>() << " "
              << for_two_vars(l).item<int>();
    for (const ag::Tensor& l2 : lists) std::cout << " " << successive_for_loops(l, l2).item<int>();
    std::cout << "\n";
  }
  for (int n1 = 0; n1 <= 2; ++n1) {
    for (int n2 = 0; n2 <= 2; ++n2) {
      std::cout << "n1=" << n1 << " n2=" << n2 << ": "
                << successive_while_loops(ag::Tensor(n1), ag::Tensor(n2)).item<int>() << " "
                << nested_while_loops(ag::Tensor(n1), ag::Tensor(n2)) << "\n";
    }
  }
  const ag::Tensor matrices[] = {ag::zeros({1, 0}, ag::int32), ag::zeros({2, 0}, ag::int32),
                                 ag::constant({{1}}),          ag::constant({{1}, {2}}),
                                 ag::constant({{1, 2}}),       ag::constant({{1, 2}, {3, 4}})};
  for (const ag::Tensor& m : matrices)
    std::cout << "m=" << m.shape() << ": " << nested_for_loops(m) << "\n";
}
