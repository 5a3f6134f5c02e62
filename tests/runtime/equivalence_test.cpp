// Graph mode gives what eager mode gives: for every op of ag/ops.h and every
// dtype it supports, a traced call (ag::function) returns the same dtype,
// shape and bytes as the eager call. Each case runs three ways: eagerly, as a
// traced function of placeholders (twice, the second time on the cached plan
// whose buffers are now reused), and traced over captured eager tensors, which
// constant folding evaluates while tracing. Dtypes an op rejects must be
// rejected in both modes. Every op of ag/ops.def must appear in the graph of
// some case (OpEquivalenceCoverage). The cases are in op_cases.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "op_cases.h"
#include "ops/op_registry.h"
#include "staged_test_util.h"

namespace {

using ag::DType;
using ag::Tensor;
using ag_test::all_op_cases;
using ag_test::kAllDtypes;
using ag_test::OpCase;
using Tensors = std::vector<Tensor>;

struct Param {
  const OpCase* op;
  DType dtype;
};

std::vector<Param> supported_params() {
  std::vector<Param> out;
  for (const OpCase& c : all_op_cases()) {
    for (DType d : c.dtypes) out.push_back({&c, d});
  }
  return out;
}

std::vector<Param> unsupported_params() {
  std::vector<Param> out;
  for (const OpCase& c : all_op_cases()) {
    for (DType d : kAllDtypes) {
      if (std::find(c.dtypes.begin(), c.dtypes.end(), d) == c.dtypes.end()) out.push_back({&c, d});
    }
  }
  return out;
}

void PrintTo(const Param& p, std::ostream* os) {
  *os << p.op->name << " on " << ag::dtype_name(p.dtype);
}

std::string param_name(const testing::TestParamInfo<Param>& info) {
  return info.param.op->name + "_" + std::string(ag::dtype_name(info.param.dtype));
}

class OpEquivalence : public testing::TestWithParam<Param> {};

TEST_P(OpEquivalence, TracedCallMatchesEagerCall) {
  const OpCase& c = *GetParam().op;
  const Tensors inputs = c.inputs(GetParam().dtype);
  const Tensor eager = c.op(inputs);

  auto traced = ag::function([op = c.op](const Tensors& xs) { return op(xs); });
  ag_test::expect_same_bits(eager, traced(inputs), "first (tracing) call");
  ag_test::expect_same_bits(eager, traced(inputs), "cached call");
  EXPECT_EQ(traced.tracing_count(), 1);

  auto folded = ag::function([&] { return c.op(inputs); });
  ag_test::expect_same_bits(eager, folded(), "captured inputs (constant folded)");
}

INSTANTIATE_TEST_SUITE_P(Ops, OpEquivalence, testing::ValuesIn(supported_params()), param_name);

class OpRejection : public testing::TestWithParam<Param> {};

TEST_P(OpRejection, UnsupportedDtypeFailsInBothModes) {
  const OpCase& c = *GetParam().op;
  const Tensors inputs = c.inputs(GetParam().dtype);
  EXPECT_THROW(c.op(inputs), ag::Error);
  auto traced = ag::function([op = c.op](const Tensors& xs) { return op(xs); });
  EXPECT_THROW(traced(inputs), ag::Error);
}

INSTANTIATE_TEST_SUITE_P(Ops, OpRejection, testing::ValuesIn(unsupported_params()), param_name);

// ---- Random ops: with a seed, the first draw is the same in both modes ------------------

struct RandomCase {
  const char* name;
  DType dtype;
  bool normal;
};

const RandomCase kRandomCases[] = {
    {"uniform_float32", ag::float32, false}, {"uniform_float64", ag::float64, false},
    {"uniform_int32", ag::int32, false},     {"uniform_int64", ag::int64, false},
    {"normal_float32", ag::float32, true},   {"normal_float64", ag::float64, true}};

class RandomEquivalence : public testing::TestWithParam<RandomCase> {};

TEST_P(RandomEquivalence, FirstDrawWithASeedMatches) {
  const RandomCase& r = GetParam();
  // A seed no other test uses, so the eager sequence starts at its first draw.
  const uint64_t seed = 0xE0u + uint64_t(r.dtype) * 2 + r.normal;
  auto draw = [&] {
    return r.normal ? ag::random_normal({3, 4}, 0.0, 2.0, r.dtype, seed)
                    : ag::random_uniform({3, 4}, -5.0, 5.0, r.dtype, seed);
  };
  auto traced = ag::function(draw);
  Tensor graph = traced();
  Tensor eager = draw();
  ag_test::expect_same_bits(eager, graph, "first draw");
  // The graph's sequence moves on, as the eager one does.
  Tensor graph_next = traced();
  EXPECT_NE(std::memcmp(graph.raw_data(), graph_next.raw_data(),
                        size_t(graph.num_elements()) * ag::dtype_size(graph.dtype())),
            0);
}

INSTANTIATE_TEST_SUITE_P(Ops, RandomEquivalence, testing::ValuesIn(kRandomCases),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- Every op of ops.def has a case -----------------------------------------------------

// The ops the cases' graphs contain: an op is covered when some case's trace
// (of its first supported dtype) records a node of it. A case that fails to
// trace (its own test reports why) is listed in `untraced`.
std::set<std::string> covered_ops(std::string& untraced) {
  std::set<std::string> covered;
  auto add = [&](const std::string& name, const std::function<ag::Graph()>& trace) {
    try {
      for (const std::string& op : trace().ops()) covered.insert(op);
    } catch (const ag::Error&) {
      untraced += " " + name;
    }
  };
  // Ops as traced, and the ops the optimiser makes of them (fused_conv).
  for (const OpCase& c : all_op_cases()) {
    auto traced = ag::function([op = c.op](const Tensors& xs) { return op(xs); });
    add(c.name, [&] { return traced.get_concrete_function(c.inputs(c.dtypes.front())).graph(); });
    add(c.name,
        [&] { return traced.get_concrete_function(c.inputs(c.dtypes.front())).optimized_graph(); });
  }
  for (const RandomCase& r : kRandomCases) {
    add(r.name, [&] {
      auto traced = ag::function([r] {
        return r.normal ? ag::random_normal({2}, 0.0, 1.0, r.dtype)
                        : ag::random_uniform({2}, 0.0, 1.0, r.dtype);
      });
      return traced.get_concrete_function().graph();
    });
  }
  return covered;
}

TEST(OpEquivalenceCoverage, EveryOpInOpsDefHasACase) {
  std::string untraced;
  const std::set<std::string> covered = covered_ops(untraced);
  std::string missing;
  for (size_t i = 0; i < size_t(ag::ops::OpId::kCount); ++i) {
    std::string name(ag::ops::op_def(ag::ops::OpId(i)).name);
    if (!covered.count(name)) missing += " " + name;
  }
  EXPECT_EQ(missing, "") << "ops of ag/ops.def with no case in make_cases() "
                            "(tests/runtime/op_cases.cpp):"
                         << missing << "; cases that failed to trace:" << untraced;
}

// ---- Non-strict execution (the TensorFlow guide's example) ----------------------------------

TEST(NonStrictExecution, UnusedGatherRaisesEagerlyButNotInGraph) {
  auto unused_return = [](const Tensor& x) {
    ag::gather(x, ag::constant({1}));  // out of range for a length-1 x; the result is unused
    return x;
  };
  const Tensor x = ag::constant({0.0f});
  EXPECT_THROW(unused_return(x), ag::InvalidArgumentError);

  auto graph = ag::function(unused_return);
  Tensor out;
  EXPECT_NO_THROW(out = graph(x));
  ag_test::expect_same_bits(x, out, "graph result");
}

TEST(NonStrictExecution, UsedGatherRaisesInBothModes) {
  auto used = [](const Tensor& x) { return ag::gather(x, ag::constant({1})); };
  const Tensor x = ag::constant({0.0f});
  EXPECT_THROW(used(x), ag::InvalidArgumentError);
  auto graph = ag::function(used);
  EXPECT_THROW(graph(x), ag::InvalidArgumentError);
}

}  // namespace
