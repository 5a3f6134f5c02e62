// Conditionals and logical expressions in the style of AutoGraph's cond_basic
// and logical_expression tests. The templates run with C++ scalars (plain
// statements at trace time) and with tensors (staged), like AutoGraph's tests
// that pass either `int` or `tf.constant`.
#include <ag/ag.h>

#include <iostream>

AG_FUNCTION ag::Tensor if_no_vars(ag::Tensor c, ag::Variable& v) {
  v.assign(0);
  if (c) v.assign_add(1);
  return v.read();
}

AG_FUNCTION ag::Tensor if_else_no_vars(ag::Tensor c, ag::Variable& v) {
  v.assign(0);
  if (c) {
    v.assign_add(1);
  } else {
    v.assign_add(2);
  }
  return v.read();
}

template <typename T>
AG_FUNCTION ag::Tensor if_else_two_vars(T n) {
  ag::Tensor i = 0;
  ag::Tensor j = 1;
  if (i < n) {
    i += 1;
    j *= 10;
  } else {
    i += 2;
    j *= 20;
  }
  return ag::stack({i, j});
}

AG_FUNCTION ag::Tensor if_else_creates_var(ag::Tensor c) {
  ag::Tensor i;
  if (c) {
    i = 1;
  } else {
    i = 2;
  }
  return i;
}

AG_FUNCTION ag::Tensor if_local_var(ag::Tensor c) {
  ag::Tensor i = 0;
  if (c) {
    ag::Tensor j = 1;
    i = j + 1;
  }
  return i;
}

AG_FUNCTION ag::Tensor if_else_local_var(ag::Tensor c) {
  ag::Tensor i = 0;
  if (c) {
    ag::Tensor j = 1;
  } else {
    ag::Tensor j = 2;
    i = j + 1;
  }
  return i;
}

AG_FUNCTION ag::Tensor if_locally_modified_var(ag::Tensor c) {
  ag::Tensor i = 0;
  ag::Tensor j = 2;
  if (c) {
    j = j + 1;
    i = j + 1;
  }
  return i;
}

template <typename A, typename B>
AG_FUNCTION ag::Tensor nested_if_elses(A n1, B n2) {
  ag::Tensor i = 0;
  ag::Tensor l = 0;
  if (i < n1) {
    ag::Tensor j = 0;
    ag::Tensor s = 0;
    if (j < n2) {
      s = s * 10 + i * j;
      j += 1;
    } else {
      s = s * 11 + i * j;
      j += 2;
    }
    l = l * 1000 + s;
    i += 1;
  } else {
    ag::Tensor j = 0;
    ag::Tensor s = 0;
    if (j < n2) {
      s = s * 12 + i * j;
      j += 3;
    } else {
      s = s * 13 + i * j;
      j += 4;
    }
    l = l * 2000 + s;
    i += 1;
  }
  return l + i;
}

AG_FUNCTION ag::Tensor nested_if_temporarily_undefined_return(ag::Tensor c1, ag::Tensor c2) {
  if (c1) {
    if (c2) return ag::constant(1);
  }
  return ag::constant(2);
}

AG_FUNCTION ag::Tensor composite_ors(ag::Tensor x, ag::Tensor y, ag::Tensor z) {
  return x || y || z;
}

AG_FUNCTION ag::Tensor composite_ands(ag::Tensor x, ag::Tensor y, ag::Tensor z) {
  return x && y && z;
}

AG_FUNCTION ag::Tensor composite_mixed(ag::Tensor x, ag::Tensor y, ag::Tensor z) {
  return x || y || (z && y && z);
}

AG_FUNCTION ag::Tensor comparison(ag::Tensor x, ag::Tensor y, ag::Tensor z) {
  return x < y && y < z;
}

AG_FUNCTION ag::Tensor if_on_logical(ag::Tensor x, ag::Tensor y) {
  ag::Tensor r = 0;
  if (x > 0 && !(y > 0)) {
    r = 1;
  } else if (x > 0 || y > 0) {
    r = 2;
  }
  return r;
}

AG_FUNCTION ag::Tensor ternary(ag::Tensor x) {
  ag::Tensor sign = x > 0 ? ag::constant(1) : (x < 0 ? ag::constant(-1) : ag::constant(0));
  return sign * x;
}

// C++ numbers in the branches of a tensor `?:` that feeds a tensor operator.
AG_FUNCTION ag::Tensor ternary_numbers(ag::Tensor x) {
  ag::Tensor scaled = ag::cast(x, ag::float32) * (x > 0 ? 0.5 : 2.0);
  return ag::cast(scaled, ag::int32) + (x >= 1 ? 1000 : 2000);
}

int main() {
  ag::Variable v(0);
  for (bool c : {true, false})
    std::cout << "no_vars(" << c << ") = " << if_no_vars(ag::Tensor(c), v).item<int>() << " "
              << if_else_no_vars(ag::Tensor(c), v).item<int>() << "\n";
  for (int n : {0, 1})
    std::cout << "two_vars(" << n << ") = " << if_else_two_vars(n) << " "
              << if_else_two_vars(ag::Tensor(n)) << "\n";
  for (bool c : {true, false})
    std::cout << "locals(" << c << ") = " << if_else_creates_var(ag::Tensor(c)).item<int>() << " "
              << if_local_var(ag::Tensor(c)).item<int>() << " "
              << if_else_local_var(ag::Tensor(c)).item<int>() << " "
              << if_locally_modified_var(ag::Tensor(c)).item<int>() << "\n";
  for (int n1 : {0, 1})
    for (int n2 : {0, 1})
      std::cout << "nested_if_elses(" << n1 << ", " << n2
                << ") = " << nested_if_elses(n1, n2).item<int>() << " "
                << nested_if_elses(ag::Tensor(n1), n2).item<int>() << " "
                << nested_if_elses(n1, ag::Tensor(n2)).item<int>() << " "
                << nested_if_elses(ag::Tensor(n1), ag::Tensor(n2)).item<int>() << " "
                << nested_if_temporarily_undefined_return(ag::Tensor(n1 == 1), ag::Tensor(n2 == 1))
                       .item<int>()
                << "\n";
  const bool triples[][3] = {{false, true, false}, {false, false, false}, {true, true, true},
                             {true, false, true},  {false, true, true},   {false, false, true}};
  for (const auto& t : triples) {
    ag::Tensor x(t[0]), y(t[1]), z(t[2]);
    std::cout << "logical(" << t[0] << t[1] << t[2] << ") = " << composite_ors(x, y, z).item<bool>()
              << composite_ands(x, y, z).item<bool>() << composite_mixed(x, y, z).item<bool>()
              << "\n";
  }
  const int orders[][3] = {{1, 2, 3}, {2, 1, 3}, {3, 2, 1}, {3, 1, 2}, {1, 3, 2}, {2, 3, 1}};
  for (const auto& o : orders)
    std::cout << "comparison(" << o[0] << o[1] << o[2] << ") = "
              << comparison(ag::Tensor(o[0]), ag::Tensor(o[1]), ag::Tensor(o[2])).item<bool>()
              << "\n";
  for (int x : {-1, 0, 1})
    for (int y : {-1, 0, 1})
      std::cout << "if_on_logical(" << x << ", " << y
                << ") = " << if_on_logical(ag::Tensor(x), ag::Tensor(y)).item<int>() << " "
                << ternary(ag::Tensor(x * 3 + y)).item<int>() << " "
                << ternary_numbers(ag::Tensor(x * 3 + y)).item<int>() << "\n";
}
