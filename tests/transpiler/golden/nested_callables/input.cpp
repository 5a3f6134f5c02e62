// Code that marked functions reach without being marked themselves, in the
// style of AutoGraph's call_trees tests: lambdas defined inside marked code
// (returning from a staged `if`, looping on a tensor, or with a tensor `?:`)
// and function templates called with tensors are staged with their caller;
// the function given to ag::host_function runs at execution time and is kept
// as written.
#include <ag/ag.h>

#include <iostream>
#include <vector>

AG_FUNCTION ag::Tensor lambda_returns(ag::Tensor x) {
  auto absolute = [](ag::Tensor v) {
    if (v > 0) return v;
    return -v;
  };
  auto count_down = [&](ag::Tensor v) -> ag::Tensor {
    ag::Tensor steps = 0;
    while (v > 0) {
      v -= 3;
      steps += 1;
    }
    return steps;
  };
  return absolute(x) * 100 + count_down(absolute(x));
}

AG_FUNCTION ag::Tensor lambda_in_loop(ag::Tensor n) {
  ag::Tensor total = 0;
  for (auto i : ag::range(n)) {
    auto pick = [&](ag::Tensor a) { return a > 2 ? a : -a; };
    total += pick(i);
  }
  return total;
}

AG_FUNCTION ag::Tensor host_side(ag::Tensor x) {
  std::vector<ag::Tensor> out = ag::host_function(
      [](std::vector<ag::Tensor> in) {
        ag::Tensor v = in[0];
        if (v.item<int>() > 2) v = v * 2;
        return std::vector<ag::Tensor>{v};
      },
      {x}, {ag::TensorSpec({}, ag::int32)});
  return out[0];
}

template <typename T>
T clip_high(T v) {
  if (v > 5) v = T(5);
  return v;
}

AG_FUNCTION ag::Tensor template_callee(ag::Tensor x) {
  ag::Tensor values = ag::stack({x, x * 2, x * 3}, 0);
  while (ag::reduce_any(values > 10)) values = ag::floordiv(values, 2);
  return clip_high(x) * 100 + clip_high(7) + ag::reduce_sum(values);
}

int main() {
  for (int n : {-4, 0, 3, 7, 11}) {
    std::cout << n << ": " << lambda_returns(ag::Tensor(n)).item<int>() << " "
              << lambda_in_loop(ag::Tensor(n)).item<int>() << " "
              << host_side(ag::Tensor(n)).item<int>() << " "
              << template_callee(ag::Tensor(n)).item<int>() << "\n";
  }
}
