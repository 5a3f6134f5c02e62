// Control flow in the style of AutoGraph's converter tests (break, continue,
// return, control_flow, logical and conditional expressions): loops with no
// iterations, several continues, breaks out of nested loops, returns from deep
// inside loops, loops over a tensor's rows, shapes that grow in a loop, float
// conditions, ?: with C++ numbers. Run eagerly and staged, with equal output.
#include <ag/ag.h>

#include <iostream>

// while with if inside and two state vars
AG_FUNCTION ag::Tensor w1(ag::Tensor n) {
  ag::Tensor i = 0;
  ag::Tensor s = 0;
  while (i < n) {
    if (i % 3 == 0) {
      s += i;
    } else {
      s -= 1;
    }
    i += 1;
  }
  return s;
}

// for over range with continue and break
AG_FUNCTION ag::Tensor f1(ag::Tensor n) {
  ag::Tensor s = 0;
  for (auto i : ag::range(n)) {
    if (i % 2 == 0) continue;
    if (s > 20) break;
    s += i;
  }
  return s;
}

// return inside for inside while
AG_FUNCTION ag::Tensor r1(ag::Tensor n) {
  ag::Tensor j = 0;
  while (j < 5) {
    for (auto i : ag::range(n)) {
      if (i * j > 6) return i * 100 + j;
    }
    j += 1;
  }
  return -j;
}

// if without else, early return, code after
AG_FUNCTION ag::Tensor r2(ag::Tensor x) {
  if (x > 3) return x * 2;
  ag::Tensor y = x + 1;
  if (y > 2) {
    y = y * 10;
  }
  return y;
}

// logical ops and conditional expression
AG_FUNCTION ag::Tensor l1(ag::Tensor a, ag::Tensor b) {
  ag::Tensor r = (a > 0 && b > 0) ? a + b : a - b;
  if (!(a > b) || a == 2) r = r * 3;
  return r;
}

// loop over a tensor's first axis
AG_FUNCTION ag::Tensor t1(ag::Tensor m) {
  ag::Tensor acc = ag::zeros({3}, ag::float32);
  for (auto row : m) {
    if (ag::reduce_sum(row) > 0) acc = acc + row;
  }
  return acc;
}

// C-style for with tensor bound
AG_FUNCTION ag::Tensor c1(ag::Tensor n) {
  ag::Tensor s = 1;
  for (ag::Tensor i = 1; i <= n; i += 1) s = s * 2;
  return s;
}

// shape changes in loop: auto relax
AG_FUNCTION ag::Tensor g1(ag::Tensor n) {
  ag::Tensor v = ag::constant({1});
  ag::Tensor i = 0;
  while (i < n) {
    v = ag::concat({v, v}, 0);
    i += 1;
  }
  return ag::reduce_sum(v);
}

// nested while with break in inner
AG_FUNCTION ag::Tensor n1(ag::Tensor n) {
  ag::Tensor i = 0, total = 0;
  while (i < n) {
    ag::Tensor j = 0;
    while (true) {
      if (j >= i) break;
      total += j;
      j += 1;
    }
    i += 1;
  }
  return total;
}

AG_FUNCTION ag::Tensor no_iter(ag::Tensor n) {
  ag::Tensor s = 7;
  for (auto i : ag::range(n, n)) s += i;
  for (auto row : ag::zeros({0, 2}, ag::int32)) s += ag::reduce_sum(row);
  return s;
}

AG_FUNCTION ag::Tensor multi_continue(ag::Tensor n) {
  ag::Tensor s = 0;
  ag::Tensor i = 0;
  while (i < n) {
    i += 1;
    if (i % 2 == 0) continue;
    if (i % 3 == 0) {
      if (i > 5) continue;
      s += 100;
    }
    s += i;
  }
  return s;
}

AG_FUNCTION ag::Tensor nested_break(ag::Tensor n) {
  ag::Tensor count = 0;
  for (auto i : ag::range(n)) {
    for (auto j : ag::range(n)) {
      if (j > i) break;
      count += 1;
    }
    if (count > 10) break;
  }
  return count;
}

AG_FUNCTION ag::Tensor deep_return(ag::Tensor x) {
  ag::Tensor i = 0;
  while (i < 10) {
    if (i > 2) {
      if (x > i) {
        while (x > 20) {
          x -= 7;
          if (x < 25) return x * 1000;
        }
      } else {
        return i * 100;
      }
    }
    i += 1;
  }
  return x;
}

AG_FUNCTION ag::Tensor float_loop(ag::Tensor x) {
  ag::Tensor y = x;
  while (ag::reduce_sum(ag::abs(y)) > 0.5) {
    y = y / 2.0f;
    if (ag::reduce_max(y) > 3.0f) y = y - 1.0f;
  }
  return y;
}

AG_FUNCTION ag::Tensor eq_ops(ag::Tensor a, ag::Tensor b) {
  ag::Tensor r = 0;
  if (a == b) r += 1;
  if (a != b && !(a < b)) r += 10;
  if ((a > 0) || (b > 0 && a < -100)) r += 100;
  return r + (a >= b ? 1000 : 2000);
}

int main() {
  for (int n : {0, 1, 4, 7, 12}) {
    std::cout << n << ": " << w1(ag::Tensor(n)).item<int>() << " " << f1(ag::Tensor(n)).item<int>()
              << " " << r1(ag::Tensor(n)).item<int>() << " " << r2(ag::Tensor(n)).item<int>() << " "
              << l1(ag::Tensor(n - 3), ag::Tensor(n % 4)).item<int>() << " "
              << c1(ag::Tensor(n)).item<int>() << " " << g1(ag::Tensor(n % 5)).item<int>() << " "
              << n1(ag::Tensor(n)).item<int>() << "\n";
  }
  auto m = ag::constant({{1.0f, -2.0f, 3.0f}, {-5.0f, 1.0f, 1.0f}, {0.5f, 0.5f, 0.5f}});
  std::cout << t1(m) << "\n";

  for (int n : {0, 1, 3, 6, 30}) {
    std::cout << no_iter(ag::Tensor(n)).item<int>() << " "
              << multi_continue(ag::Tensor(n)).item<int>() << " "
              << nested_break(ag::Tensor(n)).item<int>() << " "
              << deep_return(ag::Tensor(n)).item<int>() << " "
              << eq_ops(ag::Tensor(n - 3), ag::Tensor(n % 4)).item<int>() << " "
              << float_loop(ag::constant({float(n), 1.5f})) << "\n";
  }
}
