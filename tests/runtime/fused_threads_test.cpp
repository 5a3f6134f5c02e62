// A fused step (exec/plan_fused.cpp) splits its blocks over the intra-op
// threads: the same bits with any thread count (each block writes its own
// partial result, folded in block order), every element computed once, and a
// member's error on a pool thread still names the member. Runs under TSan
// (tools/sanitize.sh thread).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"

namespace {

using ag::Tensor;

class FusedThreads : public ::testing::Test {
 protected:
  void TearDown() override { ag::set_intra_op_threads(1); }
};

Tensor iota_float(int64_t n) {
  std::vector<float> v(size_t(n), 0.0f);
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float(i % 977) * 0.003f - 1.1f;
  return ag::constant(v, {n});
}

// f's graph with one thread, then with `threads`: the same bits.
template <class F, class... Args>
void expect_same_bits_with(int threads, const char* what, F f, const Args&... args) {
  auto fn = ag::function(f, {.name = what});
  ag::set_intra_op_threads(1);
  Tensor one = fn(args...);
  ag::set_intra_op_threads(threads);
  Tensor many = fn(args...);
  ASSERT_EQ(one.shape(), many.shape()) << what;
  EXPECT_EQ(std::memcmp(one.raw_data(), many.raw_data(),
                        size_t(one.num_elements()) * ag::dtype_size(one.dtype())),
            0)
      << what << " with " << threads << " threads";
}

// 300,001 elements: 293 blocks, the last one partial, split unevenly (the
// mse streams: 19 blocks).
TEST_F(FusedThreads, ChainsGiveTheSameBitsWithAnyThreadCount) {
  Tensor x = iota_float(300'001);
  Tensor y = ag::tanh(x);
  auto mse = [](Tensor a, Tensor b) { return ag::reduce_mean((a - b) * (a - b)); };
  auto long_sum = [](Tensor a, Tensor b) { return ag::reduce_sum(ag::tanh(a * 0.5f + b) * b); };
  auto chain = [](Tensor a, Tensor b) { return ag::maximum(a - b, 0.0f) * 3.0f + b; };
  for (int threads : {2, 3}) {
    expect_same_bits_with(threads, "mse", mse, x, y);
    expect_same_bits_with(threads, "long_sum", long_sum, x, y);
    expect_same_bits_with(threads, "chain", chain, x, y);
  }
  Tensor n = ag::range(ag::constant(-150'000), ag::constant(150'001));
  expect_same_bits_with(2, "int_max", [](Tensor t) { return ag::reduce_max(t * 7 % 1001); }, n);
  expect_same_bits_with(
      2, "collatz_step",
      [](Tensor t) {
        Tensor next = ag::where(t % 2 == 0, ag::floordiv(t, 2), 3 * t + 1);
        return ag::where(t > 1, next, t);
      },
      n);
}

// The split computes every element: a sum of ones counts them.
TEST_F(FusedThreads, EveryElementIsComputedOnce) {
  ag::set_intra_op_threads(2);
  auto count = ag::function([](Tensor t) { return ag::reduce_sum(t * 0 + 1); }, {.name = "count"});
  Tensor ones = ag::ones({300'001}, ag::DType::int64);
  EXPECT_EQ(count(ones).item<int64_t>(), 300'001);
}

TEST_F(FusedThreads, AMemberErrorOnAPoolThreadNamesTheMember) {
  ag::set_intra_op_threads(2);
  auto divide = ag::function([](Tensor x, Tensor d) { return ag::floordiv(x + 1, d) * 2; },
                             {.name = "divide"});
  std::vector<int32_t> divisors(200'000, 3);
  divisors.back() = 0;  // in the last chunk, which a pool thread may take
  Tensor x = ag::ones({200'000}, ag::DType::int32);
  const std::string message =
      ag_test::error_of([&] { (void)divide(x, ag::constant(divisors, {200'000})); });
  EXPECT_NE(message.find("floordiv: integer division by zero"), std::string::npos) << message;
  EXPECT_NE(message.find("in op floordiv (node 'floordiv') of function 'divide'"),
            std::string::npos)
      << message;
}

}  // namespace
