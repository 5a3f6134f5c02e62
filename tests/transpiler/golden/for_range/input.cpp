#include <ag/ag.h>

#include <iostream>

AG_FUNCTION ag::Tensor sum_range(ag::Tensor n) {
  ag::Tensor total = 0;
  for (auto i : ag::range(n)) {
    total = total + i;
  }
  return total;
}

AG_FUNCTION ag::Tensor sum_rows(ag::Tensor m) {
  ag::Tensor acc = 0;
  ag::TensorArray rows(ag::int32, 0, /*dynamic_size=*/true);
  for (const ag::Tensor& row : m) {
    acc = acc + ag::reduce_sum(row);
    rows = rows.write(acc, row);
  }
  return rows.stack() + acc;
}

int main() {
  std::cout << sum_range(5) << "\n";
  std::cout << sum_rows(ag::constant({{0, 0}, {1, 0}, {0, 1}})) << "\n";
}
