// Loop control in the style of AutoGraph's loop_control_flow tests: break and
// continue in single and nested loops, inside nested conditionals, and returns
// from inside loops. Each function runs eagerly and staged on the same inputs.
#include <ag/ag.h>

#include <iostream>

AG_FUNCTION ag::Tensor continue_in_single_for(ag::Tensor l) {
  ag::Tensor s = 0;
  for (auto c : l) {
    if (c % 2 > 0) continue;
    s += c;
  }
  return s;
}

AG_FUNCTION ag::Tensor continue_in_single_while(ag::Tensor x) {
  ag::Tensor s = 0;
  while (x > 0) {
    x -= 1;
    if (x % 2 > 0) continue;
    s += x;
  }
  return s;
}

AG_FUNCTION ag::Tensor continue_in_inner_for(ag::Tensor m) {
  ag::Tensor s = 0;
  for (auto l : m) {
    for (auto c : l) {
      if (c % 2 > 0) continue;
      s += c;
    }
  }
  return s;
}

AG_FUNCTION ag::Tensor continue_in_inner_while(ag::Tensor x, ag::Tensor y) {
  ag::Tensor s = 0;
  while (x > 0) {
    x -= 1;
    while (y > 0) {
      y -= 1;
      if ((x + y) % 2 > 0) continue;
      s += x + y;
    }
  }
  return s;
}

AG_FUNCTION ag::Tensor break_in_single_for(ag::Tensor l) {
  ag::Tensor s = 0;
  for (auto c : l) {
    if (c % 2 > 0) break;
    s += c;
  }
  return s;
}

AG_FUNCTION ag::Tensor unconditional_return_in_single_for(ag::Tensor l) {
  ag::Tensor s = 0;
  for (auto c : l) {
    s += c;
    return s;
  }
  return s;
}

AG_FUNCTION ag::Tensor effectively_unconditional_return_in_single_for(ag::Tensor l) {
  ag::Tensor s = 0;
  for (auto c : l) {
    s += c;
    if (c % 2 > 0) {
      return s;
    } else {
      return -s;
    }
  }
  return s;
}

AG_FUNCTION ag::Tensor unconditional_return_in_single_while(ag::Tensor x) {
  ag::Tensor s = 0;
  while (x > 0) {
    x -= 1;
    s += x;
    return s;
  }
  return s;
}

AG_FUNCTION ag::Tensor break_in_single_while(ag::Tensor x) {
  ag::Tensor s = 0;
  while (x > 0) {
    x -= 1;
    if (x % 2 > 0) break;
    s += x;
  }
  return s;
}

AG_FUNCTION ag::Tensor break_in_inner_for(ag::Tensor m) {
  ag::Tensor s = 0;
  for (auto l : m) {
    for (auto c : l) {
      if (c % 2 > 0) break;
      s += c;
    }
  }
  return s;
}

AG_FUNCTION ag::Tensor break_in_inner_while(ag::Tensor x, ag::Tensor y) {
  ag::Tensor s = 0;
  while (x > 0) {
    x -= 1;
    while (y > 0) {
      y -= 1;
      if ((x + y) % 2 == 0) break;
      s += x + y;
    }
  }
  return s;
}

AG_FUNCTION ag::Tensor break_continue_in_inner_for(ag::Tensor m) {
  ag::Tensor s = 0;
  for (auto l : m) {
    for (auto c : l) {
      if (c % 2 > 0) {
        break;
      } else {
        continue;
      }
      s += c;
    }
  }
  return s;
}

AG_FUNCTION ag::Tensor break_followed_by_cond_in_single_for(ag::Tensor x, ag::Tensor y) {
  for (auto i : ag::range(y)) {
    if (i == 2) break;
    if (x > 0) x -= 1;
  }
  return x;
}

AG_FUNCTION ag::Tensor break_followed_by_cond_in_single_while(ag::Tensor x) {
  while (x > 0) {
    if (x == 2) break;
    if (x > 0) x -= 1;
  }
  return x;
}

AG_FUNCTION ag::Tensor multiple_breaks_in_single_while(ag::Tensor n) {
  ag::Tensor s = 1;
  ag::Tensor i = 0;
  while (i < n) {
    i += 1;
    if (i > 10 * n) break;
    if (i == n) break;
    s = s * 10 + i;
  }
  return ag::stack({i, s});
}

int main() {
  const ag::Tensor lists[] = {ag::zeros({0}, ag::int32), ag::constant({1}), ag::constant({1, 2}),
                              ag::constant({1, 2, 3}), ag::constant({1, 2, 3, 4})};
  for (const ag::Tensor& l : lists) {
    std::cout << "l=" << l.shape() << ": " << continue_in_single_for(l).item<int>() << " "
              << break_in_single_for(l).item<int>();
    if (l.shape()[0] > 0) {
      std::cout << " " << unconditional_return_in_single_for(l).item<int>() << " "
                << effectively_unconditional_return_in_single_for(l).item<int>();
    }
    std::cout << "\n";
  }
  for (int n = 0; n <= 4; ++n) {
    ag::Tensor x = n;
    std::cout << "n=" << n << ": " << continue_in_single_while(x).item<int>() << " "
              << break_in_single_while(x).item<int>() << " "
              << break_followed_by_cond_in_single_while(x).item<int>() << " "
              << multiple_breaks_in_single_while(x) << " "
              << break_followed_by_cond_in_single_for(x, ag::Tensor(4)).item<int>();
    if (n > 0) std::cout << " " << unconditional_return_in_single_while(x).item<int>();
    std::cout << "\n";
  }
  const ag::Tensor matrices[] = {ag::zeros({2, 0}, ag::int32), ag::constant({{1}, {2}}),
                                 ag::constant({{1, 2}, {3, 4}}),
                                 ag::constant({{1, 2, 3}, {4, 5, 6}})};
  for (const ag::Tensor& m : matrices) {
    std::cout << "m=" << m.shape() << ": " << continue_in_inner_for(m).item<int>() << " "
              << break_in_inner_for(m).item<int>() << " "
              << break_continue_in_inner_for(m).item<int>() << "\n";
  }
  for (int x = 0; x <= 4; ++x) {
    for (int y = 0; y <= 4; ++y) {
      std::cout << "x=" << x << " y=" << y << ": "
                << continue_in_inner_while(ag::Tensor(x), ag::Tensor(y)).item<int>() << " "
                << break_in_inner_while(ag::Tensor(x), ag::Tensor(y)).item<int>() << "\n";
    }
  }
}
