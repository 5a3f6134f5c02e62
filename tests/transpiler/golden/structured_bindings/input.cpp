// Structured bindings are state like any local: bindings to a pair, a tuple,
// an array and a struct with ag_fields, by value and by reference, assigned
// in a staged if, while or for (with `=`, a compound assignment or std::tie),
// and members of a local aggregate assigned in staged code.
#include <ag/ag.h>

#include <array>
#include <iostream>
#include <tuple>
#include <utility>

struct Bracket {
  ag::Tensor lo;
  ag::Tensor hi;
};
auto ag_fields(Bracket& b) { return std::tie(b.lo, b.hi); }

std::pair<ag::Tensor, ag::Tensor> bracket(ag::Tensor c) {
  return {ag::constant(1.0), c};
}

// Bisection for the square root of c: one step of the bracket, in an if.
AG_FUNCTION ag::Tensor bisect_once(ag::Tensor c) {
  auto [lo, hi] = bracket(c);
  ag::Tensor mid = (lo + hi) / 2;
  if (mid * mid > c) {
    hi = mid;
  } else {
    lo = mid;
  }
  return ag::stack({lo, hi});
}

// The same in a while loop, with std::tie.
AG_FUNCTION ag::Tensor bisect_tie(ag::Tensor c) {
  auto [lo, hi] = bracket(c);
  while (hi - lo > 1e-3) {
    ag::Tensor mid = (lo + hi) / 2;
    std::tie(lo, hi) = ag::cond(mid * mid > c, [&] { return std::pair{lo, mid}; },
                                [&] { return std::pair{mid, hi}; });
  }
  return ag::round(lo * 100) / 100;
}

// And with `=` on each binding.
AG_FUNCTION ag::Tensor bisect_assign(ag::Tensor c) {
  auto [lo, hi] = bracket(c);
  while (hi - lo > 1e-3) {
    ag::Tensor mid = (lo + hi) / 2;
    if (mid * mid > c) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return ag::round(hi * 100) / 100;
}

// A tuple by value and an array by reference, in a for loop.
AG_FUNCTION ag::Tensor tuple_and_array(ag::Tensor n) {
  auto [count, total, last] = std::tuple{ag::Tensor(0), ag::Tensor(0), ag::Tensor(-1)};
  std::array<ag::Tensor, 2> pair{ag::Tensor(1), ag::Tensor(1)};
  auto& [a, b] = pair;
  for (auto i : ag::range(n)) {
    count += 1;
    total = total + i;
    last = i;
    ag::Tensor next = a + b;
    a = b;
    b = next;
  }
  return ag::stack({count, total, last, pair[0], pair[1]});
}

// A struct with ag_fields, by reference: the struct itself changes.
AG_FUNCTION ag::Tensor struct_by_reference(ag::Tensor x) {
  Bracket box{x, x * 2};
  auto& [lo, hi] = box;
  if (x > 0) {
    lo = lo - 1;
  } else {
    hi += 10;
  }
  return ag::stack({box.lo, box.hi});
}

// A member of a local aggregate, assigned in a branch and in a loop.
AG_FUNCTION ag::Tensor aggregate_members(ag::Tensor x) {
  Bracket box{x, x};
  if (x > 2) box.hi = x * 10;
  while (box.lo < 5) box.lo += 2;
  return ag::stack({box.lo, box.hi});
}

// An if reads its condition when it is reached: a branch that reassigns the
// condition's variable does not change which branch runs.
AG_FUNCTION ag::Tensor condition_reassigned(ag::Tensor x) {
  ag::Tensor r = ag::constant(0.0);
  ag::Tensor b = x > 0;
  if (b) {
    b = x > 5;
    r = x + 1;
  }
  return r;
}

AG_FUNCTION ag::Tensor condition_reassigned_earlier_tensor(ag::Tensor x) {
  ag::Tensor r = ag::constant(1.0);
  ag::Tensor c = x < 0;
  ag::Tensor b = x > 0;
  if (b) {
    b = c;
    r = ag::constant(2.0);
  }
  return r;
}

int main() {
  for (double c : {2.0, 9.0})
    std::cout << "bisect(" << c << ") = " << bisect_once(ag::Tensor(c)) << " "
              << bisect_tie(ag::Tensor(c)) << " " << bisect_assign(ag::Tensor(c)) << "\n";
  for (int n : {0, 1, 5})
    std::cout << "tuple_and_array(" << n << ") = " << tuple_and_array(ag::Tensor(n)) << "\n";
  for (double x : {-1.0, 3.0}) {
    std::cout << "struct_by_reference(" << x << ") = " << struct_by_reference(ag::Tensor(x))
              << "\n";
    std::cout << "aggregate_members(" << x << ") = " << aggregate_members(ag::Tensor(x)) << "\n";
  }
  for (double x : {-1.0, 1.0, 7.0})
    std::cout << "condition_reassigned(" << x << ") = " << condition_reassigned(ag::Tensor(x))
              << " " << condition_reassigned_earlier_tensor(ag::Tensor(x)) << "\n";
}
