// ag::onnx::load on models built here with ONNX's protobuf classes: values,
// symbolic dims, control flow, ONNX semantics that differ from ours, and the
// errors a user sees.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "ag/ag.h"
#include "ag/onnx.h"
#include "graph/graph.h"

namespace {

using onnx::TensorProto;

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17) {
    model_.set_ir_version(8);
    auto* import = model_.add_opset_import();
    import->set_domain("");
    import->set_version(opset);
    model_.mutable_graph()->set_name("test_graph");
  }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }

  static void set_type(onnx::ValueInfoProto* info, const std::string& name, int elem,
                       std::vector<std::string> dims) {
    info->set_name(name);
    auto* t = info->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    auto* shape = t->mutable_shape();
    for (const std::string& d : dims) {
      auto* dim = shape->add_dim();
      if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
        dim->set_dim_value(std::stoll(d));
      else
        dim->set_dim_param(d);
    }
  }
  ModelBuilder& input(const std::string& name, int elem, std::vector<std::string> dims) {
    set_type(graph().add_input(), name, elem, std::move(dims));
    return *this;
  }
  ModelBuilder& output(const std::string& name, int elem, std::vector<std::string> dims) {
    set_type(graph().add_output(), name, elem, std::move(dims));
    return *this;
  }
  static onnx::NodeProto* add_node(onnx::GraphProto& g, const std::string& op,
                                   std::vector<std::string> in, std::vector<std::string> out,
                                   const std::string& name = "") {
    auto* node = g.add_node();
    node->set_op_type(op);
    node->set_name(name);
    for (auto& i : in) node->add_input(i);
    for (auto& o : out) node->add_output(o);
    return node;
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> in,
                        std::vector<std::string> out, const std::string& name = "") {
    return add_node(graph(), op, std::move(in), std::move(out), name);
  }
  // A Loop or If node's graph attribute `body`, empty, to fill.
  static onnx::GraphProto* add_body(onnx::NodeProto* node) {
    auto* attr = node->add_attribute();
    attr->set_name("body");
    attr->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = attr->mutable_g();
    g->set_name("body");
    return g;
  }
  ag::onnx::Model load() const {
    return ag::onnx::load_from_bytes(model_.SerializeAsString(), "test.onnx");
  }

 private:
  onnx::ModelProto model_;
};

void add_int_attr(onnx::NodeProto* node, const std::string& name, int64_t v) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

TEST(OnnxLoad, AddWithASymbolicDimRunsForEverySize) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {"N", "2"}).input("y", TensorProto::FLOAT, {"2"});
  b.output("z", TensorProto::FLOAT, {"N", "2"});
  b.node("Add", {"x", "y"}, {"z"}, "add_node");
  ag::onnx::Model m = b.load();
  EXPECT_EQ(m.signature(),
            "test_graph(x: TensorSpec(shape=(None, 2), dtype=float32), y: TensorSpec(shape=(2,), "
            "dtype=float32)) -> (z)");
  auto out = m({ag::constant({{1.0f, 2.0f}, {3.0f, 4.0f}}), ag::constant({10.0f, 20.0f})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{11, 22, 13, 24}));
  out = m({ag::constant({{1.0f, 2.0f}}), ag::constant({10.0f, 20.0f})});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{11, 22}));
  EXPECT_EQ(m.graph().ops(),
            (std::vector<std::string>{"Placeholder", "Placeholder", "add", "Identity"}));
}

// The symbolic dim N meets a static 3 in the Add: the output is [3], and an
// x whose N is neither 3 nor 1 fails when the model runs, as eager would, in
// the op that cannot take it (not a read past x's buffer).
TEST(OnnxLoad, ASymbolicDimThatAnOpCannotTakeFailsWhenTheModelRuns) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {"N"}).input("y", TensorProto::FLOAT, {"3"});
  b.output("z", TensorProto::FLOAT, {"3"});
  b.node("Add", {"x", "y"}, {"z"}, "add_node");
  ag::onnx::Model m = b.load();
  const ag::Tensor y = ag::constant({10.0f, 20.0f, 30.0f});
  EXPECT_EQ(m({ag::constant({1.0f, 2.0f, 3.0f}), y})[0].to_vector<float>(),
            (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(m({ag::constant({1.0f}), y})[0].to_vector<float>(), (std::vector<float>{11, 21, 31}));
  try {
    m({ag::constant({1.0f, 2.0f}), y});
    FAIL() << "expected an InvalidArgumentError";
  } catch (const ag::InvalidArgumentError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.substr(0, what.find('\n')),
              "InvalidArgumentError: Incompatible shapes: [2] vs. [3]");
    // The model's node, not a line of the importer.
    EXPECT_EQ(what.substr(what.find('\n')),
              "\n  in op add (node 'add_node/add') of function 'test_graph'");
  }
}

TEST(OnnxLoad, AnInputOfTheWrongTypeIsATypeErrorNamingIt) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {"3"}).output("y", TensorProto::FLOAT, {"3"});
  b.node("Neg", {"x"}, {"y"});
  ag::onnx::Model m = b.load();
  try {
    m({ag::constant({1, 2, 3})});
    FAIL() << "expected a TypeError";
  } catch (const ag::TypeError& e) {
    EXPECT_EQ(e.message(),
              "test_graph: input 'x' must be TensorSpec(shape=(3,), dtype=float32), got "
              "TensorSpec(shape=(3,), dtype=int32)");
  }
}

TEST(OnnxLoad, AnUnsupportedOpIsAnErrorNamingTheOpAndTheNode) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {"3"}).output("y", TensorProto::FLOAT, {"3"});
  b.node("StringNormalizer", {"x"}, {"y"}, "my_normalizer");
  try {
    b.load();
    FAIL() << "expected an UnimplementedError";
  } catch (const ag::UnimplementedError& e) {
    EXPECT_NE(
        std::string(e.what()).find(
            "StringNormalizer node 'my_normalizer': op type 'StringNormalizer' is not supported"),
        std::string::npos)
        << e.what();
  }
}

TEST(OnnxLoad, AFileThatIsNoModelIsAClearError) {
  EXPECT_THROW(ag::onnx::load_from_bytes("not a protobuf", "junk.onnx"), ag::InvalidArgumentError);
  try {
    ag::onnx::load("/nonexistent/model.onnx");
    FAIL();
  } catch (const ag::InvalidArgumentError& e) {
    EXPECT_EQ(e.message(), "/nonexistent/model.onnx: cannot open the file");
  }
}

TEST(OnnxLoad, IntegerDivTruncatesAndModFollowsFmod) {
  ModelBuilder b;
  b.input("a", TensorProto::INT32, {"6"}).input("b", TensorProto::INT32, {"6"});
  b.output("q", TensorProto::INT32, {"6"}).output("r", TensorProto::INT32, {"6"});
  b.output("f", TensorProto::INT32, {"6"});
  b.node("Div", {"a", "b"}, {"q"});
  b.node("Mod", {"a", "b"}, {"r"});
  add_int_attr(b.node("Mod", {"a", "b"}, {"f"}), "fmod", 1);
  std::vector<int32_t> a{7, -7, 7, -7, 6, -6}, d{2, 2, -2, -2, 3, 3};
  auto out = b.load()({ag::constant(a, ag::Shape{6}), ag::constant(d, ag::Shape{6})});
  std::vector<int32_t> q, f;
  for (size_t i = 0; i < a.size(); ++i) {
    q.push_back(a[i] / d[i]);  // C++ truncates, as ONNX's Div does
    f.push_back(a[i] % d[i]);  // C++ takes the dividend's sign, as fmod=1 does
  }
  EXPECT_EQ(out[0].to_vector<int32_t>(), q);
  EXPECT_EQ(out[2].to_vector<int32_t>(), f);
  // fmod=0: the divisor's sign, as Python's %.
  EXPECT_EQ(out[1].to_vector<int32_t>(), (std::vector<int32_t>{1, 1, -1, -1, 0, 0}));
}

TEST(OnnxLoad, IfRunsTheBranchTheConditionPicks) {
  ModelBuilder b;
  b.input("c", TensorProto::BOOL, {}).input("x", TensorProto::FLOAT, {"2"});
  b.output("y", TensorProto::FLOAT, {"2"});
  auto* node = b.node("If", {"c"}, {"y"}, "pick");
  for (auto [name, op] : {std::pair{"then_branch", "Neg"}, std::pair{"else_branch", "Abs"}}) {
    auto* attr = node->add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = attr->mutable_g();
    g->set_name(std::string(name) + "_graph");
    ModelBuilder::add_node(*g, op, {"x"}, {std::string("out_") + op});
    ModelBuilder::set_type(g->add_output(), std::string("out_") + op, TensorProto::FLOAT, {"2"});
  }
  ag::onnx::Model m = b.load();
  ag::Tensor x = ag::constant({-1.5f, 2.0f});
  EXPECT_EQ(m({ag::Tensor(true), x})[0].to_vector<float>(), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(m({ag::Tensor(false), x})[0].to_vector<float>(), (std::vector<float>{1.5f, 2.0f}));
  auto ops = m.graph().ops();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "If"), ops.end());
}

TEST(OnnxLoad, LoopCarriesValuesAndStacksScanOutputs) {
  // for i in range(M): s = s + x; scan: s
  ModelBuilder b;
  b.input("M", TensorProto::INT64, {}).input("x", TensorProto::FLOAT, {"2"});
  b.output("s_final", TensorProto::FLOAT, {"2"}).output("s_all", TensorProto::FLOAT, {"K", "2"});
  b.graph().add_initializer()->CopyFrom([] {
    TensorProto t;
    t.set_name("s0");
    t.set_data_type(TensorProto::FLOAT);
    t.add_dims(2);
    t.add_float_data(0.0f);
    t.add_float_data(100.0f);
    return t;
  }());
  auto* node = b.node("Loop", {"M", "", "s0"}, {"s_final", "s_all"}, "accumulate");
  onnx::GraphProto* g = ModelBuilder::add_body(node);
  ModelBuilder::set_type(g->add_input(), "i", TensorProto::INT64, {});
  ModelBuilder::set_type(g->add_input(), "cond_in", TensorProto::BOOL, {});
  ModelBuilder::set_type(g->add_input(), "s_in", TensorProto::FLOAT, {"2"});
  ModelBuilder::add_node(*g, "Identity", {"cond_in"}, {"cond_out"});
  ModelBuilder::add_node(*g, "Add", {"s_in", "x"}, {"s_out"});
  ModelBuilder::add_node(*g, "Identity", {"s_out"}, {"scan"});
  ModelBuilder::set_type(g->add_output(), "cond_out", TensorProto::BOOL, {});
  ModelBuilder::set_type(g->add_output(), "s_out", TensorProto::FLOAT, {"2"});
  ModelBuilder::set_type(g->add_output(), "scan", TensorProto::FLOAT, {"2"});
  ag::onnx::Model m = b.load();
  auto out = m({ag::Tensor(int64_t{3}), ag::constant({1.0f, 2.0f})});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{3, 106}));
  EXPECT_EQ(out[1].shape(), (ag::Shape{3, 2}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{1, 102, 2, 104, 3, 106}));
  auto ops = m.graph().ops();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "While"), ops.end());
}

TensorProto scalar_initializer(const std::string& name, float value) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(TensorProto::FLOAT);
  t.add_float_data(value);
  return t;
}

TensorProto scalar_initializer(const std::string& name, int64_t value) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(TensorProto::INT64);
  t.add_int64_data(value);
  return t;
}

// x = x + 1 in a Loop, the float scalar x its only variable.
struct LoopModel {
  // The Loop's condition input: "computed" before the Loop as x < `limit`,
  // by its own Less on its own initializer (the exporter's form of a while,
  // onnx/exporter.cpp, emit_while), the graph input "c" ("input"), or none ("").
  std::string first_test = "computed";
  float limit = 10.0f;
  // The body's condition output: x < 10 of the new x, or its condition
  // input passed on (the usual for loop).
  bool passes_on = false;
  // The trip count: none (""), the graph input "M" ("input"), or the
  // initializer "M" holding `m` ("initializer").
  std::string trip_count = "";
  int64_t m = 0;

  ag::onnx::Model load() const {
    ModelBuilder b;
    b.input("x", TensorProto::FLOAT, {});
    if (trip_count == "input") b.input("M", TensorProto::INT64, {});
    if (trip_count == "initializer") *b.graph().add_initializer() = scalar_initializer("M", m);
    if (first_test == "input") b.input("c", TensorProto::BOOL, {});
    b.output("x_final", TensorProto::FLOAT, {});
    *b.graph().add_initializer() = scalar_initializer("limit", limit);
    *b.graph().add_initializer() = scalar_initializer("ten", 10.0f);
    *b.graph().add_initializer() = scalar_initializer("one", 1.0f);
    if (first_test == "computed") b.node("Less", {"x", "limit"}, {"c"});
    auto* loop = b.node("Loop", {trip_count.empty() ? "" : "M", first_test.empty() ? "" : "c", "x"},
                        {"x_final"});
    onnx::GraphProto* g = ModelBuilder::add_body(loop);
    ModelBuilder::set_type(g->add_input(), "i", TensorProto::INT64, {});
    ModelBuilder::set_type(g->add_input(), "cond_in", TensorProto::BOOL, {});
    ModelBuilder::set_type(g->add_input(), "x_in", TensorProto::FLOAT, {});
    ModelBuilder::add_node(*g, "Add", {"x_in", "one"}, {"x_new"});
    if (passes_on) {
      ModelBuilder::add_node(*g, "Identity", {"cond_in"}, {"cond_out"});
    } else {
      ModelBuilder::add_node(*g, "Less", {"x_new", "ten"}, {"next_test"});
      ModelBuilder::add_node(*g, "Identity", {"next_test"}, {"cond_out"});
    }
    ModelBuilder::add_node(*g, "Identity", {"x_new"}, {"x_out"});
    ModelBuilder::set_type(g->add_output(), "cond_out", TensorProto::BOOL, {});
    ModelBuilder::set_type(g->add_output(), "x_out", TensorProto::FLOAT, {});
    return b.load();
  }
};

// How many values the While of `m`'s graph carries.
size_t loop_state_size(const ag::onnx::Model& m) {
  for (const auto& n : m.graph().body().nodes)
    if (n.kind == ag::graph::NodeKind::While) return n.outputs.size();
  ADD_FAILURE() << "no While in\n" << m.graph().body().to_string();
  return 0;
}

// The model's x_final for the inputs x, then M and c where it has them.
float run_loop(const ag::onnx::Model& m, float x, std::optional<int64_t> trip_count = {},
               std::optional<bool> first_test = {}) {
  std::vector<ag::Tensor> inputs{ag::Tensor(x)};
  if (trip_count) inputs.push_back(ag::Tensor(*trip_count));
  if (first_test) inputs.push_back(ag::Tensor(*first_test));
  return m(inputs)[0].item<float>();
}

TEST(OnnxLoad, AConditionComputedByTheSameNodesBeforeAndInTheLoopIsItsTest) {
  // The limits are equal constants of different initializers: x alone is
  // loop state, and the while tests x < 10.
  ag::onnx::Model m = LoopModel{}.load();
  EXPECT_EQ(loop_state_size(m), 1u);
  EXPECT_EQ(run_loop(m, 0.0f), 10.0f);
  EXPECT_EQ(run_loop(m, 9.5f), 10.5f);
  EXPECT_EQ(run_loop(m, 12.0f), 12.0f);
}

TEST(OnnxLoad, AFirstConditionThatIsNotTheBodysStaysLoopState) {
  // x < 5 first, x < 10 after: from 7, no iteration (the body's condition
  // would run three).
  ag::onnx::Model m = LoopModel{.limit = 5.0f}.load();
  EXPECT_EQ(loop_state_size(m), 2u);
  EXPECT_EQ(run_loop(m, 7.0f), 7.0f);
  EXPECT_EQ(run_loop(m, 0.0f), 10.0f);
}

TEST(OnnxLoad, ATripCountAndAConditionBothEndTheLoop) {
  // A trip count known only when the model runs: the iteration count is
  // loop state, the condition is not.
  ag::onnx::Model counted = LoopModel{.trip_count = "input"}.load();
  EXPECT_EQ(loop_state_size(counted), 2u);
  EXPECT_EQ(run_loop(counted, 0.0f, 3), 3.0f);
  EXPECT_EQ(run_loop(counted, 0.0f, 20), 10.0f);
  EXPECT_EQ(run_loop(counted, 7.0f, 20), 10.0f);
  EXPECT_EQ(run_loop(counted, 0.0f, 0), 0.0f);
  EXPECT_EQ(run_loop(counted, 0.0f, -1), 0.0f);
  // The condition carried too.
  ag::onnx::Model both_carried = LoopModel{.limit = 5.0f, .trip_count = "input"}.load();
  EXPECT_EQ(loop_state_size(both_carried), 3u);
  EXPECT_EQ(run_loop(both_carried, 7.0f, 20), 7.0f);
  EXPECT_EQ(run_loop(both_carried, 0.0f, 3), 3.0f);
  // A trip count known at load time is the while's maximum_iterations, no
  // iteration at all when negative.
  for (auto [m, want] : {std::pair{int64_t{3}, 3.0f}, {int64_t{20}, 10.0f}, {int64_t{-1}, 0.0f}}) {
    ag::onnx::Model bounded = LoopModel{.trip_count = "initializer", .m = m}.load();
    EXPECT_EQ(loop_state_size(bounded), 1u);
    EXPECT_EQ(run_loop(bounded, 0.0f), want) << "M = " << m;
  }
}

TEST(OnnxLoad, AConditionTheBodyPassesOnIsNotLoopState) {
  // for i in range(M) if c: the condition stays what it was.
  ag::onnx::Model m =
      LoopModel{.first_test = "input", .passes_on = true, .trip_count = "input"}.load();
  EXPECT_EQ(loop_state_size(m), 2u);  // i and x
  EXPECT_EQ(run_loop(m, 0.5f, 3, true), 3.5f);
  EXPECT_EQ(run_loop(m, 0.5f, 3, false), 0.5f);
  EXPECT_EQ(run_loop(m, 0.5f, 0, true), 0.5f);
  // Without a condition, and with a trip count known at load time: x alone.
  ag::onnx::Model bounded =
      LoopModel{.first_test = "", .passes_on = true, .trip_count = "initializer", .m = 4}.load();
  EXPECT_EQ(loop_state_size(bounded), 1u);
  EXPECT_EQ(run_loop(bounded, 0.5f), 4.5f);
}

TEST(OnnxLoad, SequenceOpsWorkOnTheStackedRowsWithPositionsFromTheEnd) {
  // rows = split(x); insert y before the last row (-1); erase the last row.
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {"3", "2"}).input("y", TensorProto::FLOAT, {"2"});
  b.output("stacked", TensorProto::FLOAT, {"K", "2"}).output("n", TensorProto::INT64, {});
  b.output("first", TensorProto::FLOAT, {"2"});
  add_int_attr(b.node("SplitToSequence", {"x"}, {"rows"}), "keepdims", 0);
  b.graph().add_initializer()->CopyFrom([] {
    TensorProto t;
    t.set_name("minus_one");
    t.set_data_type(TensorProto::INT64);
    t.add_int64_data(-1);
    return t;
  }());
  b.node("SequenceInsert", {"rows", "y", "minus_one"}, {"inserted"});
  b.node("SequenceErase", {"inserted"}, {"erased"});
  auto* concat = b.node("ConcatFromSequence", {"erased"}, {"stacked"});
  add_int_attr(concat, "axis", 0);
  add_int_attr(concat, "new_axis", 1);
  b.node("SequenceLength", {"erased"}, {"n"});
  b.node("SequenceAt", {"erased", "minus_one"}, {"first_from_end"});
  b.node("Identity", {"first_from_end"}, {"first"});
  ag::onnx::Model m = b.load();
  auto out =
      m({ag::constant({{1.0f, 2.0f}, {3.0f, 4.0f}, {5.0f, 6.0f}}), ag::constant({9.0f, 9.0f})});
  EXPECT_EQ(out[0].shape(), (ag::Shape{3, 2}));
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 9, 9}));
  EXPECT_EQ(out[1].item<int64_t>(), 3);
  EXPECT_EQ(out[2].to_vector<float>(), (std::vector<float>{9, 9}));
}

TEST(OnnxLoad, AnEraseAndAnInsertAtOnePositionAreOneTensorArrayWrite) {
  // How ag::onnx::save writes row p of a TensorArray.
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {"3", "2"}).input("y", TensorProto::FLOAT, {"2"});
  b.input("p", TensorProto::INT64, {});
  b.output("stacked", TensorProto::FLOAT, {"3", "2"});
  add_int_attr(b.node("SplitToSequence", {"x"}, {"rows"}), "keepdims", 0);
  b.node("SequenceErase", {"rows", "p"}, {"erased"});
  b.node("SequenceInsert", {"erased", "y", "p"}, {"written"});
  auto* concat = b.node("ConcatFromSequence", {"written"}, {"stacked"});
  add_int_attr(concat, "axis", 0);
  add_int_attr(concat, "new_axis", 1);
  ag::onnx::Model m = b.load();
  const ag::Tensor x = ag::constant({{1.0f, 2.0f}, {3.0f, 4.0f}, {5.0f, 6.0f}});
  const ag::Tensor y = ag::constant({9.0f, 8.0f});
  EXPECT_EQ(m({x, y, ag::Tensor(int64_t{1})})[0].to_vector<float>(),
            (std::vector<float>{1, 2, 9, 8, 5, 6}));
  EXPECT_EQ(m({x, y, ag::Tensor(int64_t{-1})})[0].to_vector<float>(),
            (std::vector<float>{1, 2, 3, 4, 9, 8}));
  auto ops = m.graph().ops();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "tensor_array_write"), ops.end());
}

TEST(OnnxLoad, ASequenceOfElementsOfDifferentShapesIsAnErrorNamingTheNode) {
  ModelBuilder b;
  b.input("x", TensorProto::FLOAT, {"2"}).input("y", TensorProto::FLOAT, {"3"});
  b.output("n", TensorProto::INT64, {});
  b.node("SequenceConstruct", {"x", "y"}, {"seq"}, "mixed");
  b.node("SequenceLength", {"seq"}, {"n"});
  try {
    b.load();
    FAIL() << "expected an UnimplementedError";
  } catch (const ag::UnimplementedError& e) {
    EXPECT_NE(e.message().find("SequenceConstruct node 'mixed': a sequence of elements of "
                               "different shapes"),
              std::string::npos)
        << e.message();
  }
}

TEST(OnnxLoad, ASequenceAsAGraphInputIsAnErrorNamingIt) {
  ModelBuilder b;
  auto* in = b.graph().add_input();
  in->set_name("seq");
  in->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(TensorProto::FLOAT);
  b.output("n", TensorProto::INT64, {});
  b.node("SequenceLength", {"seq"}, {"n"});
  try {
    b.load();
    FAIL() << "expected an UnimplementedError";
  } catch (const ag::UnimplementedError& e) {
    EXPECT_NE(e.message().find("graph value 'seq' is a sequence; ag::onnx::load takes and "
                               "returns tensors only"),
              std::string::npos)
        << e.message();
  }
}

}  // namespace
