// ag::set_intra_op_threads: large kernels split over a pool give the same
// bits as one thread (reductions fold fixed blocks in a fixed order), errors
// thrown on a pool thread reach the caller, and callers on several threads
// share the pool safely (the suite runs under TSan: tools/sanitize.sh thread).
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"

namespace {

using ag::Tensor;

// Restores one thread after each test, whatever it set.
class IntraOpThreads : public ::testing::Test {
 protected:
  void TearDown() override { ag::set_intra_op_threads(1); }
};
using ConcurrencyIntraOp = IntraOpThreads;

Tensor iota_float(int64_t n) {
  std::vector<float> v(size_t(n), 0.0f);
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float(i % 1000) * 0.001f - 0.3f;
  return ag::constant(v, {n});
}

// Equal bit for bit (NaN-free data).
void expect_same_bits(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(
      std::memcmp(a.raw_data(), b.raw_data(), size_t(a.num_elements()) * ag::dtype_size(a.dtype())),
      0);
}

// Runs f with one thread, then with `threads`, and compares the results.
template <class F>
void expect_thread_count_does_not_matter(F f, int threads = 2) {
  ag::set_intra_op_threads(1);
  Tensor one = f();
  ag::set_intra_op_threads(threads);
  Tensor many = f();
  expect_same_bits(one, many);
}

TEST_F(IntraOpThreads, DefaultIsOneAndTheSetterRejectsZero) {
  EXPECT_EQ(ag::intra_op_threads(), 1);
  EXPECT_EQ(
      ag_test::error_of([] { ag::set_intra_op_threads(0); }),
      "InvalidArgumentError: set_intra_op_threads: the thread count must be at least 1, got 0");
  ag::set_intra_op_threads(2);
  EXPECT_EQ(ag::intra_op_threads(), 2);
}

TEST_F(IntraOpThreads, ElementwiseOpsGiveTheSameBits) {
  Tensor x = iota_float(300'001);  // an odd size: uneven chunks
  Tensor y = ag::tanh(x) + 1.0f;
  expect_thread_count_does_not_matter([&] { return ag::tanh(x) * y - x; });
  expect_thread_count_does_not_matter([&] { return ag::where(x > 0.1f, x, y); });
  expect_thread_count_does_not_matter([&] { return ag::cast(x, ag::DType::float64); });
  expect_thread_count_does_not_matter([&] { return ag::clip_by_value(x, -0.1f, 0.2f); });
  // More threads than the machine has cores still computes every element.
  expect_thread_count_does_not_matter([&] { return ag::sigmoid(x); }, 5);
}

TEST_F(IntraOpThreads, ReductionsGiveTheSameBitsAndTheRightSum) {
  Tensor x = iota_float(1'000'003);
  expect_thread_count_does_not_matter([&] { return ag::reduce_sum(x); });
  expect_thread_count_does_not_matter([&] { return ag::reduce_mean(ag::square(x)); });
  expect_thread_count_does_not_matter([&] { return ag::reduce_max(x); });
  Tensor m = ag::reshape(iota_float(600 * 500), {600, 500});
  expect_thread_count_does_not_matter([&] { return ag::reduce_sum(m, {0}); });
  expect_thread_count_does_not_matter([&] { return ag::reduce_sum(m, {1}); });
  Tensor cube = ag::reshape(iota_float(100 * 30 * 200), {100, 30, 200});
  expect_thread_count_does_not_matter([&] { return ag::reduce_sum(cube, {1}); });

  // The blocked sum is a sum: integers are exact.
  ag::set_intra_op_threads(2);
  Tensor ones = ag::ones({1'000'003}, ag::DType::int64);
  EXPECT_EQ(ag::reduce_sum(ones).item<int64_t>(), 1'000'003);
}

// A graph's own result does not depend on the thread count either (fusion
// may reassociate its float sum against eager's, within rounding).
TEST_F(IntraOpThreads, AGraphGivesTheSameBitsWithAnyThreadCount) {
  auto mse = ag::function([](Tensor a, Tensor b) { return ag::reduce_mean(ag::square(a - b)); },
                          {.name = "mse"});
  Tensor a = iota_float(1'000'000);
  Tensor b = ag::tanh(a) * 0.5f;
  expect_thread_count_does_not_matter([&] { return mse(a, b); });
  ag::set_intra_op_threads(2);
  float eager = ag::reduce_mean(ag::square(a - b)).item<float>();
  EXPECT_NEAR(mse(a, b).item<float>(), eager, 1e-5f * eager);
}

TEST_F(IntraOpThreads, AnErrorOnAPoolThreadReachesTheCaller) {
  ag::set_intra_op_threads(2);
  std::vector<int32_t> divisors(200'000, 3);
  divisors.back() = 0;  // in the last chunk, which a pool thread takes
  Tensor x = ag::ones({200'000}, ag::DType::int32);
  std::string message =
      ag_test::error_of([&] { (void)ag::floordiv(x, ag::constant(divisors, {200'000})); });
  EXPECT_NE(message.find("division by zero"), std::string::npos) << message;
  // The pool still works afterwards.
  EXPECT_EQ(ag::reduce_sum(x + x).item<int32_t>(), 400'000);
}

TEST_F(ConcurrencyIntraOp, CallersOnSeveralThreadsShareThePool) {
  ag::set_intra_op_threads(2);
  auto mse = ag::function([](Tensor a, Tensor b) { return ag::reduce_mean(ag::square(a - b)); },
                          {.name = "mse"});
  Tensor a = iota_float(200'000);
  Tensor b = a * 0.5f;
  ag::set_intra_op_threads(1);
  const float expected = mse(a, b).item<float>();
  ag::set_intra_op_threads(2);
  std::vector<std::thread> callers;
  std::vector<float> results(4);
  for (size_t t = 0; t < results.size(); ++t) {
    callers.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) results[t] = mse(a, b).item<float>();
    });
  }
  for (std::thread& t : callers) t.join();
  for (float r : results) EXPECT_EQ(r, expected);
}

}  // namespace
