// Loop counters are not negative (passes/counter_signs.cpp): in a While whose
// counter starts at a non-negative constant, steps up by a constant and
// bounds the loop, `where(i < k, a, b)` with k <= 0 reads b. The optimised
// body before and after: its `where` count; values against eager execution.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <ag/ag.h>

#include "body_builder.h"
#include "staged_test_util.h"

namespace {

using ag::Tensor;

// total = sum of x[where(i < k, i + 2, i)] for i = start, start + step, ...
// below `limit`: how an imported ONNX loop normalises a position counted from
// the end (x has 8 elements).
struct Counted {
  int64_t start, step, k;
};
Tensor indexed_sum(Tensor x, Tensor limit, Counted c) {
  Tensor i = ag::constant(c.start), total = ag::constant(0.0f);
  ag::while_stmt([&] { return i < limit; },
                 [&] {
                   total = total + x[ag::where(i < c.k, i + 2, i)];
                   i = i + c.step;
                 },
                 ag::state({"i", "total"}, i, total));
  return total;
}

TEST(PassCounterSigns, ASignTestOnACounterFromZeroFolds) {
  Tensor x = ag::random_uniform({8}, -1.0, 1.0, ag::float32, 1);
  const Tensor six = ag::constant(int64_t{6});
  struct Case {
    Counted counted;
    bool constant_limit;
    size_t wheres;  // left in the optimised graph
  };
  const Case cases[] = {
      {{0, 1, 0}, true, 0},   // the ONNX form: folded
      {{2, 3, -1}, true, 0},  // any non-negative start and step, k <= 0
      {{-1, 1, 0}, true, 1},  // starts negative: i + 2 is read once
      {{0, 1, 1}, true, 1},   // i < 1 is true at 0
      {{0, 1, 0}, false, 1},  // the limit an argument: no bound known
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.counted.start) + " by " + std::to_string(c.counted.step) +
                 ", k " + std::to_string(c.counted.k) +
                 (c.constant_limit ? "" : ", limit an argument"));
    const Counted counted = c.counted;
    auto f = ag::function([=](Tensor x) { return indexed_sum(x, six, counted); });
    auto g = ag::function([=](Tensor x, Tensor limit) { return indexed_sum(x, limit, counted); });
    if (c.constant_limit) {
      EXPECT_EQ(ag_test::count_ops(*ag_test::optimized_body(f, x), ag::ops::OpId::Where), c.wheres);
      ag_test::expect_same_bits(indexed_sum(x, six, counted), f(x));
    } else {
      EXPECT_EQ(ag_test::count_ops(*ag_test::optimized_body(g, x, six), ag::ops::OpId::Where),
                c.wheres);
      ag_test::expect_same_bits(indexed_sum(x, six, counted), g(x, six));
    }
  }
}

// A step that could wrap the counter past the bound (int32, 2^30 up to
// INT32_MAX): the sign test stays (traced only: the loop would not end).
TEST(PassCounterSigns, ACounterThatCouldWrapKeepsItsSignTest) {
  auto f = ag::function([](Tensor x) {
    Tensor i = ag::constant(int32_t{0}), total = ag::constant(0.0f);
    ag::while_stmt([&] { return i < INT32_MAX; },
                   [&] {
                     total = total + x[ag::where(i < 0, i + 2, i) % 8];
                     i = i + (1 << 30);
                   },
                   ag::state({"i", "total"}, i, total));
    return total;
  });
  Tensor x = ag::random_uniform({8}, -1.0, 1.0, ag::float32, 2);
  EXPECT_EQ(ag_test::count_ops(*ag_test::optimized_body(f, x), ag::ops::OpId::Where), 1u);
}

}  // namespace
