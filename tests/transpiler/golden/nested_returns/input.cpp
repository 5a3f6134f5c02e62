// Nested conditionals and loops, and early returns, in the style of
// AutoGraph's nested_control_flow and early_return tests. Block scopes stand
// in for Python's context managers.
#include <ag/ag.h>

#include <iostream>

AG_FUNCTION ag::Tensor independent_ifs(ag::Tensor x, ag::Tensor y) {
  ag::Tensor z = 0;
  if (x > 0) {
    if (y > 0) z = x + y;
  }
  return z;
}

AG_FUNCTION ag::Tensor dependent_inner_if(ag::Tensor x) {
  ag::Tensor y = 0;
  if (x > 0) {
    y = -2 * x;
    if (y > 0) x = -3 * x;
  } else {
    y = 4 * x;
  }
  return ag::stack({x, y});
}

AG_FUNCTION ag::Tensor dependent_imbalanced_inner_if(ag::Tensor x) {
  ag::Tensor y = 0;
  if (x > 0) {
    if (x < 3) {
      y = -2 * x;
      x = -3 * x;
    }
  }
  return ag::stack({x, y});
}

AG_FUNCTION ag::Tensor independent_inner_for(ag::Tensor a, ag::Tensor b) {
  ag::Tensor p = 0;
  for (auto i : ag::range(a)) {
    ag::Tensor tmp = b;
    for (auto j : ag::range(tmp)) p += j;
  }
  return p;
}

AG_FUNCTION ag::Tensor independent_inner_while(ag::Tensor a, ag::Tensor b) {
  ag::Tensor p = 0;
  while (a > 0) {
    ag::Tensor tmp = b;
    while (tmp > 0) {
      p += 1;
      tmp -= 1;
    }
    a -= 1;
  }
  return p;
}

AG_FUNCTION ag::Tensor dependent_inner_for(ag::Tensor a, ag::Tensor b) {
  ag::Tensor r = 1;
  ag::Tensor s = 0;
  for (auto i : ag::range(a)) {
    r += s;
    ag::Tensor tmp = b;
    for (auto j : ag::range(tmp)) s += j;
  }
  return r;
}

AG_FUNCTION ag::Tensor dependent_inner_while(ag::Tensor a, ag::Tensor b) {
  ag::Tensor r = 1;
  while (a > 0) {
    r += 1;
    ag::Tensor tmp = b;
    while (tmp > 0) {
      a -= 1;
      tmp -= 1;
    }
    a -= 1;
  }
  return r;
}

AG_FUNCTION ag::Tensor if_in_for(ag::Tensor a) {
  ag::Tensor k = 0;
  for (auto i : ag::range(a)) {
    if (i % 2 > 0) {
      ag::Tensor j = ag::floordiv(i, 2);
      k += j;
    }
  }
  return k;
}

AG_FUNCTION ag::Tensor while_with_continue_in_block(ag::Tensor x) {
  ag::Tensor z = 0;
  while (x > 0) {
    {
      x = x - 1;
      if (x < 5) continue;
      z = z + 1;
    }
  }
  return z;
}

AG_FUNCTION ag::Tensor while_break_in_block(ag::Tensor x) {
  ag::Tensor z = 0;
  while (x > 0) {
    {
      x = x - 1;
      if (x < 5) break;
      z = z + 1;
    }
  }
  return z;
}

AG_FUNCTION ag::Tensor return_with_default(ag::Tensor x) {
  if (x > 0) {
    ag::print("x", x);
    return x;
  }
  return x * x;
}

AG_FUNCTION ag::Tensor return_dependent_on_local(ag::Tensor c) {
  ag::Tensor t = ag::constant(1);
  if (c) return t;
  t = ag::stack({t, t});
  return ag::reduce_sum(t);
}

AG_FUNCTION ag::Tensor nested_ifs(ag::Tensor x) {
  if (x > 0) {
    if (x < 5) {
      return x;
    } else {
      return x * x;
    }
  } else {
    return x * x * x;
  }
}

AG_FUNCTION ag::Tensor possible_return_before_loop(ag::Tensor c1, ag::Tensor c2, ag::Tensor n) {
  if (c1) {
    if (c2) return ag::constant(1);
  }
  for (auto i : ag::range(n)) {
  }
  return ag::constant(2);
}

AG_FUNCTION ag::Tensor unreachable_return(ag::Tensor x) {
  {
    if (x > 0) {
      if (x < 5) {
        {
          return x;
        }
      } else {
        return x * x;
      }
    } else {
      return x * x * x;
    }
  }
  return x * x * x * x;
}

AG_FUNCTION ag::Tensor return_with_default_in_block(ag::Tensor x) {
  {
    if (x > 0) return ag::constant(1);
    return ag::constant(0);
  }
}

AG_FUNCTION ag::Tensor loop_initializing_invariant_variable(ag::Tensor n) {
  ag::Tensor a = 0;
  for (auto i : ag::range(n)) {
    if (i == 0) {
      a = 1;
    } else {
      a = 2;
    }
  }
  return a;
}

int main() {
  for (int x : {-1, 1})
    for (int y : {-1, 1})
      std::cout << "independent_ifs(" << x << ", " << y
                << ") = " << independent_ifs(ag::Tensor(x), ag::Tensor(y)).item<int>() << "\n";
  for (int x : {-1, 1, 2, 4})
    std::cout << "inner ifs(" << x << ") = " << dependent_inner_if(ag::Tensor(x)) << " "
              << dependent_imbalanced_inner_if(ag::Tensor(x)) << "\n";
  for (int a = 0; a <= 2; ++a)
    for (int b = 0; b <= 2; ++b)
      std::cout << "inner loops(" << a << ", " << b
                << ") = " << independent_inner_for(ag::Tensor(a), ag::Tensor(b)).item<int>()
                << " " << independent_inner_while(ag::Tensor(a), ag::Tensor(b)).item<int>()
                << " " << dependent_inner_for(ag::Tensor(a), ag::Tensor(b)).item<int>() << " "
                << dependent_inner_while(ag::Tensor(a), ag::Tensor(b)).item<int>() << "\n";
  for (int a : {0, 1, 2, 5})
    std::cout << "if_in_for(" << a << ") = " << if_in_for(ag::Tensor(a)).item<int>() << "\n";
  for (int x : {0, 4, 10})
    std::cout << "blocks(" << x << ") = " << while_with_continue_in_block(ag::Tensor(x)).item<int>()
              << " " << while_break_in_block(ag::Tensor(x)).item<int>() << "\n";
  for (int x : {0, 1})
    std::cout << "return_with_default(" << x
              << ") = " << return_with_default(ag::Tensor(x)).item<int>() << "\n";
  for (bool c : {true, false})
    std::cout << "return_dependent_on_local(" << c
              << ") = " << return_dependent_on_local(ag::Tensor(c)).item<int>() << "\n";
  for (int x : {-1, 3, 6})
    std::cout << "nested_ifs(" << x << ") = " << nested_ifs(ag::Tensor(x)).item<int>() << " "
              << unreachable_return(ag::Tensor(x)).item<int>() << " "
              << return_with_default_in_block(ag::Tensor(x)).item<int>() << "\n";
  for (bool c1 : {true, false})
    for (bool c2 : {true, false})
      for (int n : {0, 1, 2})
        std::cout << "possible_return_before_loop(" << c1 << ", " << c2 << ", " << n << ") = "
                  << possible_return_before_loop(ag::Tensor(c1), ag::Tensor(c2), ag::Tensor(n))
                         .item<int>()
                  << "\n";
  for (int n : {0, 1, 2})
    std::cout << "loop_initializing_invariant_variable(" << n
              << ") = " << loop_initializing_invariant_variable(ag::Tensor(n)).item<int>() << "\n";
}
