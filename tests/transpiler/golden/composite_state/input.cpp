// Composite names in control flow, in the style of AutoGraph's
// composite_names_in_control_flow tests: a struct field, an array element or
// a pair member modified in a staged if, while or for carries the whole
// object as state.
#include <ag/ag.h>

#include <array>
#include <iostream>
#include <utility>

struct Pair {
  ag::Tensor a;
  ag::Tensor b;
};
auto ag_fields(Pair& p) { return std::tie(p.a, p.b); }

AG_FUNCTION ag::Tensor if_basic_struct(ag::Tensor a) {
  Pair x{a, ag::Tensor(0)};
  if (x.a > 0) {
    x.b = 1;
  } else {
    x.b = -1;
  }
  return ag::stack({x.a, x.b});
}

AG_FUNCTION ag::Tensor if_basic_array(ag::Tensor a) {
  std::array<ag::Tensor, 2> x{a, ag::Tensor(0)};
  if (x[0] > 0) {
    x[1] = 1;
  } else {
    x[1] = -1;
  }
  return ag::stack({x[0], x[1]});
}

AG_FUNCTION ag::Tensor while_basic_struct(ag::Tensor x, ag::Tensor a, ag::Tensor b) {
  Pair y{a, b};
  while (x > 0) {
    x -= 1;
    y.a += 1;
  }
  return ag::stack({y.a, y.b});
}

AG_FUNCTION ag::Tensor while_state_only_pair(ag::Tensor a, ag::Tensor b) {
  std::pair<ag::Tensor, ag::Tensor> y{a, b};
  while (y.second <= 10) {
    y.first += 1;
    y.second *= 2;
  }
  return ag::stack({y.first, y.second});
}

AG_FUNCTION ag::Tensor for_state_only_array(ag::Tensor n, ag::Tensor a, ag::Tensor b) {
  std::array<ag::Tensor, 2> y{a, b};
  for (auto i : ag::range(n)) y[0] += i;
  return ag::stack({y[0], y[1]});
}

int main() {
  for (int a : {0, 1})
    std::cout << "if(" << a << ") = " << if_basic_struct(ag::Tensor(a)) << " "
              << if_basic_array(ag::Tensor(a)) << "\n";
  for (int x : {0, 1, 2})
    for (int a : {3, 7})
      std::cout << "while(" << x << ", " << a
                << ") = " << while_basic_struct(ag::Tensor(x), ag::Tensor(a), ag::Tensor(0)) << "\n";
  for (int b : {3, 4, 5, 6})
    std::cout << "while_state_only(" << b
              << ") = " << while_state_only_pair(ag::Tensor(0), ag::Tensor(b)) << "\n";
  for (int n : {0, 1, 2})
    std::cout << "for(" << n << ") = "
              << for_state_only_array(ag::Tensor(n), ag::Tensor(1), ag::Tensor(1)) << "\n";
}
