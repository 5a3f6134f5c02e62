// Inputs whose dims are unknown while tracing (an input_signature with
// None): an op can still get a static output shape from its other inputs or
// attrs (x + c of shape [3], reshape to [2,3], squeeze, matmul by a [2,2]).
// The graph must reject, when it runs, every input eager mode rejects,
// with eager's message and the user's line, and give eager's values for the
// inputs it accepts; also inside loops and branches.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"

namespace {

using ag::Tensor;
using ag::TensorSpec;
using ag_test::error_of;

const TensorSpec kAnyVector({ag::kUnknownDim}, ag::float32);
const TensorSpec kTwoRows({2, ag::kUnknownDim}, ag::float32);

Tensor three() {
  return ag::constant({1.0f, 2.0f, 3.0f});
}

struct Case {
  std::string name;
  std::function<Tensor(const Tensor&)> fn;
  TensorSpec spec;
  Tensor rejected;  // an input eager mode rejects
  Tensor accepted;  // and one it accepts
};

std::vector<Case> cases() {
  const Tensor two = ag::constant({1.0f, 2.0f});
  return {
      {"reshape", [](const Tensor& x) { return ag::reshape(x, {2, 3}); }, kAnyVector,
       ag::constant({1.0f, 2.0f, 3.0f, 4.0f, 5.0f}), ag::ones({6}, ag::float32)},
      {"add", [](const Tensor& x) { return x + three(); }, kAnyVector, two, ag::constant({5.0f})},
      {"where", [](const Tensor& x) { return ag::where(x > 1.5f, x, three()); }, kAnyVector, two,
       ag::constant({0.5f, 2.5f, 7.0f})},
      {"squeeze", [](const Tensor& x) { return ag::squeeze(x, {0}); }, kAnyVector, two,
       ag::constant({4.0f})},
      {"matmul", [](const Tensor& x) { return ag::matmul(x, ag::ones({2, 2}, ag::float32)); },
       kTwoRows, ag::ones({2, 3}, ag::float32), ag::constant({{1.0f, 2.0f}, {3.0f, 4.0f}})},
      {"reduction_of_a_difference",
       [](const Tensor& x) { return ag::reduce_sum(ag::square(x - three()) * 2.0f); }, kAnyVector,
       two, ag::constant({0.5f, 1.0f, -2.0f})},
      {"in_a_loop",
       [](const Tensor& x) {
         auto [i, acc] =
             ag::while_loop([](const Tensor& i, const Tensor&) { return i < 3.0f; },
                            [&](const Tensor& i, const Tensor& acc) {
                              return std::tuple<Tensor, Tensor>{i + 1.0f, acc + x * i};
                            },
                            std::tuple<Tensor, Tensor>{Tensor(0.0f), ag::zeros({3}, ag::float32)});
         return acc;
       },
       kAnyVector, two, ag::constant({1.0f, -1.0f, 0.5f})},
      {"in_a_branch",
       [](const Tensor& x) {
         return ag::cond(
             ag::reduce_sum(x) > 0.0f, [&] { return x + three(); }, [&] { return three(); });
       },
       kAnyVector, two, ag::constant({1.0f, 1.0f, 1.0f})},
  };
}

class UnknownDims : public testing::TestWithParam<size_t> {};

TEST_P(UnknownDims, GraphRejectsWhatEagerRejectsAndAgreesOnTheRest) {
  const Case c = cases()[GetParam()];
  auto staged = ag::function(c.fn, {.input_signature = std::vector{c.spec}, .name = c.name});
  std::string eager_error = error_of([&] { c.fn(c.rejected); });
  ASSERT_NE(eager_error, "<no error>");
  // Eager's message (without the " [Op:add]" an eager broadcast adds), then
  // where the op was defined.
  eager_error = eager_error.substr(0, eager_error.find(" [Op:"));
  const std::string graph_error = error_of([&] { staged(c.rejected); });
  EXPECT_EQ(graph_error.substr(0, graph_error.find('\n')), eager_error) << graph_error;
  EXPECT_NE(graph_error.find("of function '" + c.name + "', defined at " __FILE__),
            std::string::npos)
      << graph_error;
  const Tensor want = c.fn(c.accepted);
  const Tensor got = staged(c.accepted);
  EXPECT_EQ(got.shape(), want.shape());
  EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>());
  EXPECT_EQ(staged.tracing_count(), 1);
}

INSTANTIATE_TEST_SUITE_P(Ops, UnknownDims, testing::Range<size_t>(0, cases().size()),
                         [](const testing::TestParamInfo<size_t>& info) {
                           return cases()[info.param].name;
                         });

}  // namespace
