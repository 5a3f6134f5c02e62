// ag::onnx::save, then ag::onnx::load: the loaded model returns what the
// traced function returns, for the ops and control flow we export; and the
// errors for what ONNX cannot hold.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ag/ag.h"
#include "ag/onnx.h"
#include "graph/graph.h"
#include "round_trip.h"

namespace {

// "save_<test>_<k>": the name of the current test's k-th exported model.
std::string next_model_name() {
  static std::map<std::string, int> exports_of;
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  return "save_" + test + "_" + std::to_string(exports_of[test]++);
}

// Saves the trace of `fn` for `args`, loads it back, and expects the loaded
// model's outputs to equal the function's, element for element.
template <class F, class... Args>
void expect_round_trip(const F& fn, const Args&... args) {
  EXPECT_EQ(ag_onnx_test::round_trip(fn.get_concrete_function(args...).graph(), next_model_name(),
                                     {args...}, {fn(args...)}),
            "");
}

TEST(OnnxSave, MeanSquaredError) {
  auto mse =
      ag::function([](ag::Tensor a, ag::Tensor b) { return ag::reduce_mean(ag::square(a - b)); });
  expect_round_trip(mse, ag::constant({1.0f, 2.0f, 4.0f}), ag::constant({0.5f, 2.0f, 1.0f}));
}

TEST(OnnxSave, DenseLayerWithVariablesAsInitializers) {
  ag::Variable w(ag::constant({{0.5f, -1.0f}, {2.0f, 0.25f}}));
  ag::Variable b(ag::constant({0.1f, -0.2f}));
  auto dense =
      ag::function([&](ag::Tensor x) { return ag::relu(ag::matmul(x, w.read()) + b.read()); });
  expect_round_trip(dense, ag::constant({{1.0f, 2.0f}, {-3.0f, 1.0f}}));
}

TEST(OnnxSave, IntegerFloorDivisionAndModuloKeepTheirSigns) {
  auto f = ag::function(
      [](ag::Tensor a, ag::Tensor b) { return ag::stack({ag::floordiv(a, b), ag::mod(a, b)}); });
  expect_round_trip(f, ag::constant({7, -7, 7, -7, 6, -6}), ag::constant({2, 2, -2, -2, 3, 3}));
  expect_round_trip(f, ag::constant({7.5, -7.5, 7.5, -7.5}, ag::float64),
                    ag::constant({2.0, 2.0, -2.0, -2.0}, ag::float64));
}

TEST(OnnxSave, LayoutOpsAndReductions) {
  auto f = ag::function([](ag::Tensor x) {
    ag::Tensor t = ag::transpose(ag::reshape(x, {3, 2}));
    ag::Tensor s = ag::slice(ag::concat({t, t}, 1), {0, 1}, {-1, 3});
    ag::Tensor g = ag::gather(s, ag::constant({1, 0}), 0);
    ag::Tensor any = ag::cast(ag::reduce_any(ag::greater(g, 3.0f), {1}), ag::float32);
    ag::Tensor arg = ag::cast(ag::argmax(g, 1), ag::float32);
    return ag::concat({ag::reduce_sum(g, {0}), any, arg, ag::squeeze(ag::expand_dims(any, 0))}, 0);
  });
  expect_round_trip(f, ag::constant({1.0f, 5.0f, 2.0f, 6.0f, 3.0f, 4.0f}));
}

TEST(OnnxSave, ATransposeWithNegativeAxesCountsThemFromTheEnd) {
  // ONNX's perm takes no negative axes (the checker rejects {-2, 0, -1}).
  auto f = ag::function([](ag::Tensor x) { return ag::transpose(x, {-2, 0, -1}) * 2.0f; });
  expect_round_trip(f, ag::random_uniform({2, 3, 4}, -1.0, 1.0, ag::float32, 5));
}

TEST(OnnxSave, EverydayOps) {
  auto f = ag::function([](ag::Tensor x, ag::Tensor i) {
    ag::Tensor r = ag::round(x) + ag::floor(x) + ag::ceil(x) + ag::sign(x);
    ag::Tensor c = ag::clip_by_value(ag::cumsum(x, 0, true, false), -1.0f, 2.5f);
    ag::Tensor h = ag::reduce_sum(ag::one_hot(i, 4, 2.0f, -1.0f), {0});
    ag::Tensor s = ag::cast(
        ag::concat({ag::shape(x), ag::expand_dims(ag::size(x), 0), ag::expand_dims(ag::rank(x), 0)},
                   0),
        ag::float32);
    return ag::concat({r, c, h, s}, 0);
  });
  expect_round_trip(f, ag::constant({-1.5f, 0.5f, 2.5f, 0.0f}), ag::constant({0, 3, -1, 7, 3}));
}

TEST(OnnxSave, CondBecomesIf) {
  auto f = ag::function([](ag::Tensor x) {
    return ag::cond(ag::reduce_sum(x) > 0, [&] { return x * 2.0f; }, [&] { return -x; });
  });
  expect_round_trip(f, ag::constant({1.0f, 2.0f}));
  expect_round_trip(f, ag::constant({-1.0f, -2.0f}));
  auto onnx_bytes = ag_onnx_test::export_model(
      f.get_concrete_function(ag::constant({1.0f})).graph(), next_model_name());
  EXPECT_NE(onnx_bytes.find("then_branch"), std::string::npos);
}

TEST(OnnxSave, WhileLoopBecomesLoop) {
  // The TensorFlow guide's tanh loop: a data-dependent trip count.
  auto f = ag::function([](ag::Tensor x) {
    return ag::while_loop([](ag::Tensor v) { return ag::reduce_sum(v) < 10.0f; },
                          [](ag::Tensor v) { return ag::tanh(v) + v + 1.0f; }, x);
  });
  expect_round_trip(f, ag::constant({0.5f, -0.25f}));
  expect_round_trip(f, ag::constant({20.0f, 1.0f}));
}

// The op types of a model's graph and subgraphs, each with its count.
std::map<std::string, int> op_types(const onnx::GraphProto& graph) {
  std::map<std::string, int> out;
  for (const auto& node : graph.node()) {
    ++out[node.op_type()];
    for (const auto& attr : node.attribute())
      if (attr.has_g())
        for (const auto& [op, count] : op_types(attr.g())) out[op] += count;
  }
  return out;
}

onnx::ModelProto parse(const std::string& bytes) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(bytes));
  return model;
}

TEST(OnnxSave, SegmentSumIsAScatterNDThatAdds) {
  // Repeated ids and an empty segment; the count a constant, then a graph input.
  auto constant_count = ag::function([](ag::Tensor data, ag::Tensor ids) {
    return ag::unsorted_segment_sum(data, ids, ag::Tensor(int64_t{5}));
  });
  const ag::Tensor data = ag::constant({{1.5f, 2.0f}, {-3.0f, 4.0f}, {5.0f, 0.25f}});
  const ag::Tensor ids = ag::constant({3, 0, 3});
  expect_round_trip(constant_count, data, ids);
  expect_round_trip(constant_count, ag::constant({{1, 2}, {3, 4}, {5, 6}}), ids);
  expect_round_trip(constant_count, ag::constant({{1.0, 2.0}, {3.0, 4.0}}),
                    ag::constant({{4, 4}, {0, 4}}));
  // A count known only when the model runs: zeros of dims computed then (an
  // Expand by a Concat of the count and Shape(data)), which the loaded model
  // reads when it runs too.
  auto input_count = ag::function([](ag::Tensor data, ag::Tensor ids, ag::Tensor n) {
    return ag::unsorted_segment_sum(data, ids, n);
  });
  expect_round_trip(input_count, data, ids, ag::constant(4));
  const onnx::ModelProto model = parse(ag_onnx_test::export_model(
      constant_count.get_concrete_function(data, ids).graph(), next_model_name()));
  int adds = 0;
  for (const auto& node : model.graph().node()) {
    if (node.op_type() != "ScatterND") continue;
    for (const auto& attr : node.attribute())
      adds += attr.name() == "reduction" && attr.s() == "add";
  }
  EXPECT_EQ(adds, 1);
}

TEST(OnnxSave, GatherGradient) {
  // The gradient of a gather along axis 1 with repeated indices: a segment sum
  // between transposes.
  auto f = ag::function([](ag::Tensor params) {
    ag::GradientTape tape;
    tape.watch(params);
    ag::Tensor y = ag::gather(params, ag::constant({2, 0, 2}), 1);
    return tape.gradient(ag::reduce_sum(y * y), params);
  });
  expect_round_trip(f, ag::constant({{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}}));
}

TEST(OnnxSave, ARowOfATransposeIsAGatherOnTheInputsAxis) {
  // transpose(x, {1, 0, 2})[i] in the optimised graph is x[:, i, :]
  // (passes/transposed_gathers.cpp): Gather with axis 1, no Transpose.
  auto f = ag::function(
      [](ag::Tensor x, ag::Tensor i) { return ag::transpose(x, {1, 0, 2})[i] * 2.0f; });
  const ag::Tensor x = ag::random_uniform({2, 3, 4}, -1.0, 1.0, ag::float32, 3);
  for (int64_t i : {0, 2}) expect_round_trip(f, x, ag::constant(i));
  const onnx::ModelProto model = parse(ag_onnx_test::export_model(
      f.get_concrete_function(x, ag::constant(int64_t{1})).graph(), next_model_name()));
  const auto ops = op_types(model.graph());
  EXPECT_EQ(ops.count("Transpose"), 0u);
  EXPECT_EQ(ops.at("Gather"), 1);
  std::vector<int64_t> gather_axes;
  for (const auto& node : model.graph().node()) {
    for (const auto& attr : node.attribute())
      if (node.op_type() == "Gather" && attr.name() == "axis") gather_axes.push_back(attr.i());
  }
  EXPECT_EQ(gather_axes, std::vector<int64_t>{1});
}

TEST(OnnxSave, RowsOfATransposeInALoopAreAGatherOnTheInputsAxis) {
  // dynamic_rnn's input side: the optimised loop reads x[:, i, :] from x
  // (passes/transposed_gathers.cpp), exported as Gather with axis 1 in the
  // Loop's body, and no Transpose.
  auto f = ag::function([](ag::Tensor x) {
    ag::Tensor t = ag::transpose(x, {1, 0, 2});
    ag::Tensor sum = ag::zeros({5, 4}, ag::float32);
    ag::for_stmt(
        ag::range(ag::Tensor(int64_t{3})), ag::no_extra_test,
        [&](ag::Tensor i) { sum = sum * 2.0f + t[i]; }, ag::state({"sum"}, sum));
    return sum;
  });
  const ag::Tensor x = ag::random_uniform({5, 3, 4}, -1.0, 1.0, ag::float32, 3);
  expect_round_trip(f, x);
  const onnx::ModelProto model =
      parse(ag_onnx_test::export_model(f.get_concrete_function(x).graph(), next_model_name()));
  const auto ops = op_types(model.graph());
  EXPECT_EQ(ops.count("Transpose"), 0u);
  EXPECT_EQ(ops.at("Gather"), 1);
  std::vector<int64_t> gather_axes;
  std::function<void(const onnx::GraphProto&)> collect = [&](const onnx::GraphProto& graph) {
    for (const auto& node : graph.node()) {
      for (const auto& attr : node.attribute()) {
        if (node.op_type() == "Gather" && attr.name() == "axis") gather_axes.push_back(attr.i());
        if (attr.has_g()) collect(attr.g());
      }
    }
  };
  collect(model.graph());
  EXPECT_EQ(gather_axes, std::vector<int64_t>{1});
}

TEST(OnnxSave, AnArrayReadTransposedStaysASequence) {
  // dynamic_rnn's output side: the executor writes its rows along axis 1 of
  // the transposed array (passes/transposed_arrays.cpp); the export keeps
  // the rows a sequence (a write inserts one row, where a write on the
  // tensor would pass over all of it) and the Transpose after the stack.
  auto f = ag::function([](ag::Tensor x) {
    ag::TensorArray rows(ag::float32, 3);
    ag::Tensor sum = ag::zeros({5, 4}, ag::float32);
    ag::for_stmt(
        ag::range(ag::Tensor(int64_t{3})), ag::no_extra_test,
        [&](ag::Tensor i) {
          sum = sum * 2.0f + x;
          rows.write(i, sum);
        },
        ag::state({"sum", "rows"}, sum, rows));
    return ag::transpose(rows.stack(), {1, 0, 2});
  });
  const ag::Tensor x = ag::random_uniform({5, 4}, -1.0, 1.0, ag::float32, 3);
  expect_round_trip(f, x);
  const auto ops = op_types(
      parse(ag_onnx_test::export_model(f.get_concrete_function(x).graph(), next_model_name()))
          .graph());
  EXPECT_EQ(ops.at("Transpose"), 1);
  EXPECT_GE(ops.at("SequenceInsert"), 1);
  EXPECT_EQ(ops.count("Where"), 0u);
}

TEST(OnnxSave, FixedAndGrowingTensorArraysBecomeSequences) {
  // A fixed-size array written at each iteration, and a dynamic-size one
  // that grows past its end (to row 2i, leaving zero rows between).
  auto f = ag::function([](ag::Tensor x) {
    ag::TensorArray fixed(ag::float32, 3);
    ag::TensorArray grown(ag::float32, 0, /*dynamic_size=*/true);
    ag::Tensor i = ag::constant(0);
    ag::while_stmt([&] { return i < 3; },
                   [&] {
                     fixed.write(i, x * ag::cast(i, ag::float32));
                     grown.write(i * 2, x + 1.0f);
                     i = i + 1;
                   },
                   ag::state({"i", "fixed", "grown"}, i, fixed, grown));
    return ag::concat({fixed.stack(), grown.stack()}, 0);
  });
  expect_round_trip(f, ag::constant({1.5f, -2.0f}));
  const auto ops = op_types(
      parse(ag_onnx_test::export_model(f.get_concrete_function(ag::constant({1.0f, 2.0f})).graph(),
                                       next_model_name()))
          .graph());
  // Each write erases and inserts; the growing one pads first, in a Loop of
  // its own, and is stacked behind a zero row (it may be empty).
  EXPECT_EQ(ops.count("ScatterND"), 0u);
  EXPECT_EQ(ops.at("SequenceErase"), 2);
  EXPECT_EQ(ops.at("SequenceInsert"), 4);
  EXPECT_EQ(ops.at("ConstantOfShape"), 1);
  EXPECT_EQ(ops.at("Loop"), 2);
  EXPECT_EQ(ops.at("SplitToSequence"), 2);
  EXPECT_EQ(ops.at("ConcatFromSequence"), 2);
}

// An array of more elements than constant folding folds zeros of starts
// from a ConstantOfShape, not from an initializer holding its zeros.
TEST(OnnxSave, ALargeArraysZerosAreAConstantOfShape) {
  auto f = ag::function([](ag::Tensor x) {
    ag::TensorArray rows(ag::float32, 300);
    ag::for_stmt(
        ag::range(ag::constant(300)), ag::no_extra_test,
        [&](ag::Tensor i) { rows.write(i, x * ag::cast(i, ag::float32)); },
        ag::state({"rows"}, rows));
    return rows.stack();
  });
  const ag::Tensor x = ag::constant({3.0f, -1.5f, 7.0f, 2.0f, 0.5f});
  expect_round_trip(f, x);
  const ::onnx::ModelProto model =
      parse(ag_onnx_test::export_model(f.get_concrete_function(x).graph(), next_model_name()));
  EXPECT_EQ(op_types(model.graph()).at("ConstantOfShape"), 1);
  for (const ::onnx::TensorProto& init : model.graph().initializer()) {
    int64_t elements = 1;
    for (int64_t d : init.dims()) elements *= d;
    EXPECT_LT(elements, 1500) << init.name();
  }
}

// broadcast_to is an Expand, and an Expand of a tensor of known shape loads
// as broadcast_to: a large one stays an op of its small input in the loaded
// graph too, not a constant of every element (nor a where over one).
TEST(OnnxSave, BroadcastToIsAnExpandAndLoadsBack) {
  auto f = ag::function([](ag::Tensor x) {
    return ag::broadcast_to(x, {4, 3}) * 2.0f + ag::broadcast_to(ag::constant(0.5f), {2000, 4, 3});
  });
  const ag::Tensor x = ag::constant({3.0f, -1.5f, 7.0f});
  expect_round_trip(f, x);
  const std::string bytes =
      ag_onnx_test::export_model(f.get_concrete_function(x).graph(), next_model_name());
  EXPECT_EQ(op_types(parse(bytes).graph()).at("Expand"), 2);
  const ag::onnx::Model loaded = ag::onnx::load_from_bytes(bytes);
  const std::vector<std::string> ops = loaded.optimized_graph().ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "broadcast_to"), 2)
      << loaded.optimized_graph().to_string();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "where"), 0);
  for (const auto& node : loaded.optimized_graph().body().nodes) {
    if (node.kind == ag::graph::NodeKind::Const) {
      EXPECT_LE(node.value.num_elements(), 12) << node.name;
    }
  }
  EXPECT_EQ(loaded({x})[0].to_vector<float>(), f(x).to_vector<float>());
}

TEST(OnnxSave, AnArrayThatMayBeEmptyIsStackedBehindAZeroRow) {
  // With n = 0 nothing is written and the stack is [0, 2]: rows that
  // ConcatFromSequence of an empty sequence has no shape for.
  auto f = ag::function([](ag::Tensor x, ag::Tensor n) {
    ag::TensorArray rows(ag::float32, 0, /*dynamic_size=*/true);
    ag::Tensor i = ag::constant(0);
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     rows.write(i, x * ag::cast(i, ag::float32));
                     i = i + 1;
                   },
                   ag::state({"i", "rows"}, i, rows));
    return rows.stack();
  });
  const ag::Tensor x = ag::constant({1.5f, -2.0f});
  expect_round_trip(f, x, ag::constant(0));
  expect_round_trip(f, x, ag::constant(3));
  EXPECT_EQ(f(x, ag::constant(0)).shape(), (ag::Shape{0, 2}));
  const auto ops =
      op_types(parse(ag_onnx_test::export_model(f.get_concrete_function(x, ag::constant(0)).graph(),
                                                next_model_name()))
                   .graph());
  EXPECT_EQ(ops.at("ConstantOfShape"), 1);
  EXPECT_EQ(ops.at("Slice"), 1);
  EXPECT_EQ(ops.at("ConcatFromSequence"), 1);
}

TEST(OnnxSave, AnArrayWrittenInALoopIsSequenceLoopState) {
  // Each row is computed from the one before and appended, while the array
  // has fewer than 4 rows: a read, a write and the length per iteration.
  auto f = ag::function([](ag::Tensor x) {
    ag::TensorArray rows(ag::float32, 1, /*dynamic_size=*/true);
    rows.write(0, x);
    ag::while_stmt([&] { return rows.size() < 4; },
                   [&] {
                     ag::Tensor n = rows.size();
                     rows.write(n, ag::tanh(rows.read(n - 1)) + 1.0f);
                   },
                   ag::state({"rows"}, rows));
    return rows.stack();
  });
  expect_round_trip(f, ag::constant({0.5f, -1.0f, 2.0f}));
  const onnx::ModelProto model = parse(ag_onnx_test::export_model(
      f.get_concrete_function(ag::constant({1.0f})).graph(), next_model_name()));
  const auto ops = op_types(model.graph());
  EXPECT_EQ(ops.count("ScatterND"), 0u);
  for (const char* op : {"SequenceInsert", "SequenceAt", "SequenceLength", "ConcatFromSequence"})
    EXPECT_GT(ops.count(op), 0u) << op;
  // The array is the Loop's state: a sequence in and out of the body.
  for (const auto& node : model.graph().node()) {
    if (node.op_type() != "Loop" || node.output_size() != 1) continue;
    const onnx::GraphProto& body = node.attribute(0).g();
    EXPECT_TRUE(body.input(2).type().has_sequence_type());
    EXPECT_TRUE(body.output(1).type().has_sequence_type());
  }
}

TEST(OnnxSave, AnArrayWrittenInAnIfInALoopIsASequenceThroughBoth) {
  // Every even i writes row i / 2: the If returns the array, written in one
  // branch and passed through in the other.
  auto f = ag::function([](ag::Tensor x) {
    ag::TensorArray evens(ag::float32, 0, /*dynamic_size=*/true);
    ag::Tensor i = ag::constant(0);
    ag::while_stmt([&] { return i < 5; },
                   [&] {
                     ag::if_stmt(
                         ag::equal(ag::mod(i, 2), 0),
                         [&] { evens.write(ag::floordiv(i, 2), x * ag::cast(i, ag::float32)); },
                         [] {}, ag::state({"evens"}, evens));
                     i = i + 1;
                   },
                   ag::state({"i", "evens"}, i, evens));
    return evens.stack();
  });
  expect_round_trip(f, ag::constant({1.0f, -0.5f}));
  const onnx::ModelProto model = parse(ag_onnx_test::export_model(
      f.get_concrete_function(ag::constant({1.0f, 2.0f})).graph(), next_model_name()));
  const auto ops = op_types(model.graph());
  EXPECT_EQ(ops.count("ScatterND"), 0u);
  for (const char* op : {"If", "SequenceErase", "SequenceInsert", "ConcatFromSequence"})
    EXPECT_GT(ops.count(op), 0u) << op;
  int sequence_ifs = 0;
  std::function<void(const onnx::GraphProto&)> visit = [&](const onnx::GraphProto& g) {
    for (const auto& node : g.node()) {
      for (const auto& attr : node.attribute()) {
        if (!attr.has_g()) continue;
        if (node.op_type() == "If") sequence_ifs += attr.g().output(0).type().has_sequence_type();
        visit(attr.g());
      }
    }
  };
  visit(model.graph());
  EXPECT_EQ(sequence_ifs, 2);  // both branches return a sequence
}

TEST(OnnxSave, AnIfThatOnlyAssertsIsLeftOut) {
  // The If returns nothing and runs an assert only: ONNX's If must have an
  // output, and the assert is not exported, so neither is the If.
  auto f = ag::function([](ag::Tensor x) {
    ag::if_stmt(
        ag::reduce_sum(x) > 0, [&] { ag::assert_that(ag::reduce_min(x) > -10, "x too small"); },
        [] {}, ag::state());
    return x * 2.0f;
  });
  expect_round_trip(f, ag::constant({1.0f, -2.0f, 3.0f}));
  const std::string bytes = ag_onnx_test::export_model(
      f.get_concrete_function(ag::constant({1.0f})).graph(), next_model_name());
  EXPECT_EQ(bytes.find("then_branch"), std::string::npos);
}

TEST(OnnxSave, UnknownDimsBecomeSymbolicDims) {
  auto f =
      ag::function([](ag::Tensor x) { return ag::reduce_max(x, {0}) + 1; },
                   {.input_signature = std::vector{ag::TensorSpec({ag::kUnknownDim, 2}, ag::int32)},
                    .arg_names = {"x"}});
  auto concrete = f.get_concrete_function(ag::TensorSpec({ag::kUnknownDim, 2}, ag::int32));
  ag::onnx::Model model = ag::onnx::load_from_bytes(
      ag_onnx_test::export_model(concrete.graph(), "save_UnknownDimsBecomeSymbolicDims"));
  EXPECT_EQ(model.signature(),
            "save_UnknownDimsBecomeSymbolicDims(x: TensorSpec(shape=(None, 2), dtype=int32)) -> "
            "(output_0)");
  EXPECT_EQ(model({ag::constant({{1, 5}, {3, 2}, {0, 9}})})[0].to_vector<int32_t>(),
            (std::vector<int32_t>{4, 10}));
  EXPECT_EQ(model({ag::constant({{1, 5}})})[0].to_vector<int32_t>(), (std::vector<int32_t>{2, 6}));
}

TEST(OnnxSave, SumToAShape) {
  auto f = ag::function([](ag::Tensor x, ag::Tensor like) { return ag::reduce_sum_to(x, like); });
  ag::Tensor x = ag::constant({{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}});
  expect_round_trip(f, x, ag::zeros(ag::Shape{3}));
  expect_round_trip(f, x, ag::zeros(ag::Shape{2, 1}));
  expect_round_trip(f, x, ag::zeros(ag::Shape{2, 3}));
  // With dims unknown, the axes are found when the model runs: a model
  // ONNX's checker accepts (our importer takes constant axes only).
  ag::TensorSpec unknown({ag::kUnknownDim, 3}, ag::float32);
  EXPECT_FALSE(ag_onnx_test::export_model(f.get_concrete_function(unknown, unknown).graph(),
                                          "save_SumToAShape_unknown")
                   .empty());
}

// A convolution's gradient by an input of unknown spatial dims reads them
// from the input when the graph runs; ONNX's ConvTranspose needs them as
// numbers (its output_padding), so it is an error, never a wrong padding.
TEST(OnnxSave, AConvolutionGradientOfUnknownSpatialDimsIsAnError) {
  const ag::Tensor filter = ag::ones({3, 3, 2, 2});
  auto f = ag::function([&filter](ag::Tensor x) {
    ag::GradientTape tape;
    tape.watch(x);
    ag::Tensor y = ag::conv2d(x, filter, {2}, "SAME");
    return tape.gradient(ag::reduce_sum(y * y), x);
  });
  auto unknown = ag::TensorSpec({1, ag::kUnknownDim, ag::kUnknownDim, 2}, ag::float32);
  try {
    ag::onnx::save_to_bytes(f.get_concrete_function(unknown).graph());
    FAIL() << "expected an UnimplementedError";
  } catch (const ag::UnimplementedError& e) {
    EXPECT_NE(e.message().find("(conv_backprop_input) has a result whose spatial dims are "
                               "unknown while tracing; it is not exported"),
              std::string::npos)
        << e.message();
  }
  // With the dims known, the same gradient exports as a ConvTranspose.
  EXPECT_FALSE(ag::onnx::save_to_bytes(
                   f.get_concrete_function(ag::TensorSpec({1, 5, 6, 2}, ag::float32)).graph())
                   .empty());
}

TEST(OnnxSave, PrintIsAnErrorNamingTheNode) {
  auto f = ag::function([](ag::Tensor x) {
    ag::print("x =", x);
    return x + 1;
  });
  try {
    ag::onnx::save_to_bytes(f.get_concrete_function(ag::constant({1.0f})).graph());
    FAIL() << "expected an UnimplementedError";
  } catch (const ag::UnimplementedError& e) {
    EXPECT_NE(e.message().find("node 'print' runs C++ code (ag::print or ag::host_function)"),
              std::string::npos)
        << e.message();
  }
}

TEST(OnnxSave, AVariableUpdateIsAnError) {
  ag::Variable count(ag::constant(0));
  auto f = ag::function([&](ag::Tensor x) {
    count.assign_add(x);
    return count.read();
  });
  try {
    ag::onnx::save_to_bytes(f.get_concrete_function(ag::constant(1)).graph());
    FAIL() << "expected an UnimplementedError";
  } catch (const ag::UnimplementedError& e) {
    EXPECT_NE(e.message().find("updates an ag::Variable; an ONNX graph has no state"),
              std::string::npos)
        << e.message();
  }
}

}  // namespace
