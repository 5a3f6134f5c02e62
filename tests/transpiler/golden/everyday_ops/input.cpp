// TensorFlow's everyday ops inside marked functions: to agc they are plain
// ag:: calls, left as written, and the staged build gives what eager gives.
#include <ag/ag.h>

#include <iostream>

// Counts per unit bucket [0, 1), ..., [3, 4), values outside clipped in.
AG_FUNCTION ag::Tensor histogram(ag::Tensor x) {
  ag::Tensor buckets = ag::cast(ag::clip_by_value(ag::floor(x), 0.0f, 3.0f), ag::int32);
  ag::Tensor counts = ag::reduce_sum(ag::one_hot(buckets, 4), 0);
  if (ag::reduce_any(counts > 2.0f)) {
    counts = ag::cumsum(counts, 0, /*exclusive=*/false, /*reverse=*/true);
  }
  return counts;
}

// The dims, summed by a staged loop over the shape, then the size and rank.
AG_FUNCTION ag::Tensor describe(ag::Tensor x) {
  ag::Tensor total = 0;
  for (ag::Tensor d : ag::shape(x)) {
    total = total + d;
  }
  return ag::stack({total, ag::size(x), ag::rank(x)});
}

AG_FUNCTION ag::Tensor rounded(ag::Tensor x) {
  ag::Tensor r = ag::round(x);
  if (ag::reduce_all(ag::sign(x) >= 0.0f, 0)) {
    r = ag::ceil(x);
  }
  return r + ag::cast(ag::argmin(x), ag::float32);
}

int main() {
  std::cout << histogram(ag::constant({0.5f, 1.5f, 1.2f, 2.9f, -4.0f, 9.0f})) << "\n";
  std::cout << histogram(ag::constant({3.5f, 3.1f, 3.9f, 0.0f})) << "\n";
  std::cout << describe(ag::zeros(ag::Shape{2, 3, 4})) << "\n";
  std::cout << describe(ag::zeros(ag::Shape{5})) << "\n";
  std::cout << rounded(ag::constant({0.5f, 1.5f, 2.5f, -0.5f})) << "\n";
  std::cout << rounded(ag::constant({0.5f, 1.5f, 2.25f, 0.0f})) << "\n";
}
