#include <ag/ag.h>

#include <iostream>

// Nested staged control flow, with break, continue and return at depth.

// The first row of m whose sum exceeds limit, scanning each row up to its
// first negative entry; -1 if none.
AG_FUNCTION ag::Tensor first_big_row(ag::Tensor m, ag::Tensor limit) {
  ag::Tensor row_index = 0;
  for (auto row : m) {
    ag::Tensor total = 0;
    for (auto v : row) {
      if (v < 0) break;
      if (v == 0) continue;
      total = total + v;
    }
    if (total > limit) {
      return row_index;
    }
    row_index = row_index + 1;
  }
  return ag::constant(-1);
}

// Counts the pairs (i, j), i < j < n, with (i + j) % 3 == 0, stopping the
// inner loop once i * j exceeds cap.
AG_FUNCTION ag::Tensor count_pairs(ag::Tensor n, ag::Tensor cap) {
  ag::Tensor count = 0;
  ag::Tensor i = 0;
  while (i < n) {
    ag::Tensor j = i + 1;
    while (j < n) {
      if (i * j > cap) {
        break;
      } else if ((i + j) % 3 == 0) {
        count = count + 1;
      }
      j = j + 1;
    }
    i = i + 1;
  }
  return count;
}

// Classifies x by nested if/else, with a loop inside one branch.
AG_FUNCTION ag::Tensor classify(ag::Tensor x) {
  ag::Tensor result = ag::constant(0.0);
  if (x > 0) {
    if (x > 10) {
      result = x;
      while (result > 10) {
        result = result / 2;
      }
    } else {
      result = x * 2;
    }
  } else {
    if (x < -10) return ag::constant(-100.0);
    result = -x;
  }
  return result;
}

int main() {
  ag::Tensor m = ag::constant({{1, 2, -1, 9}, {0, 4, 0, 3}, {5, 5, 5, -5}});
  std::cout << first_big_row(m, 6) << " " << first_big_row(m, 20) << " " << first_big_row(m, 2)
            << "\n";
  std::cout << count_pairs(10, 100) << " " << count_pairs(10, 12) << " " << count_pairs(0, 5)
            << "\n";
  for (double x : {25.0, 4.0, -3.0, -30.0, 0.0}) {
    ag::print("classify", x, "->", classify(ag::constant(x)));
  }
}
