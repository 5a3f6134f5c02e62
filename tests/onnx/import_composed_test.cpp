// ag::onnx::load of ONNX ops imported as compositions of our ops
// (onnx/import_composed.cpp), and of shape computations that exporters
// write: shapes built from Shape, Size and ConstantOfShape, and Slice bounds
// computed when the graph runs.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ag/ag.h"
#include "ag/onnx.h"
#include "graph/graph.h"

namespace {

using onnx::TensorProto;

// A one-graph model of opset 17 built node by node.
class Model {
 public:
  Model() {
    proto_.set_ir_version(8);
    proto_.add_opset_import()->set_version(17);
    proto_.mutable_graph()->set_name("g");
  }
  Model& input(const std::string& name, int elem, const std::vector<int64_t>& dims) {
    auto* info = proto_.mutable_graph()->add_input();
    info->set_name(name);
    auto* t = info->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    auto* shape = t->mutable_shape();
    for (int64_t d : dims) {
      if (d < 0)
        shape->add_dim()->set_dim_param("N");
      else
        shape->add_dim()->set_dim_value(d);
    }
    return *this;
  }
  // An output of `rank` dims of unknown length.
  Model& output(const std::string& name, int rank, int elem = TensorProto::FLOAT) {
    auto* info = proto_.mutable_graph()->add_output();
    info->set_name(name);
    auto* t = info->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    for (int i = 0; i < rank; ++i)
      t->mutable_shape()->add_dim()->set_dim_param("d" + std::to_string(i));
    return *this;
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& in,
                        const std::string& out) {
    auto* n = proto_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(out);
    for (const auto& i : in) n->add_input(i);
    n->add_output(out);
    return n;
  }
  Model& ints(const std::string& name, const std::vector<int64_t>& values) {
    TensorProto* t = proto_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::INT64);
    t->add_dims(int64_t(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }
  onnx::ModelProto& proto() { return proto_; }
  ag::onnx::Model load() const {
    return ag::onnx::load_from_bytes(proto_.SerializeAsString(), "test.onnx");
  }

 private:
  onnx::ModelProto proto_;
};

void attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void attr(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t i : v) a->add_ints(i);
}

void expect_near(const ag::Tensor& t, const std::vector<double>& expected) {
  const std::vector<double> got = ag::cast(t, ag::float64).to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-6) << "element " << i;
}

// One node of `op` on a float input x of `dims`.
Model unary(const std::string& op, const std::vector<int64_t>& dims, onnx::NodeProto** node) {
  Model m;
  m.input("x", TensorProto::FLOAT, dims).output("y", int(dims.size()));
  *node = m.node(op, {"x"}, "y");
  return m;
}

// LayerNormalization's expanded form builds its reduced shape from the
// input's rank: Concat(Slice(Shape(x)), ConstantOfShape(Size(Shape(x)) -
// axis)), which is known while tracing when x's shape is.
TEST(OnnxImportShapes, AShapeFromConstantOfShapeOfTheRankIsKnownWhileTracing) {
  Model m;
  m.input("x", TensorProto::FLOAT, {2, 3}).output("y", 2);
  m.ints("zero", {0}).ints("one", {1});
  m.node("Shape", {"x"}, "shape");
  m.node("Size", {"shape"}, "rank");
  m.node("Slice", {"shape", "zero", "one"}, "prefix");
  m.node("Sub", {"rank", "one"}, "reduced");
  auto* ones = m.node("ConstantOfShape", {"reduced"}, "suffix");
  auto* value = ones->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(1);
  auto* concat = m.node("Concat", {"prefix", "suffix"}, "target");
  attr(concat, "axis", int64_t{0});
  auto* mean = m.node("ReduceMean", {"x"}, "mean");
  attr(mean, "axes", std::vector<int64_t>{1});
  attr(mean, "keepdims", int64_t{0});
  m.node("Reshape", {"mean", "target"}, "y");
  const auto out = m.load()({ag::constant({{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 9.0f}})});
  EXPECT_EQ(out[0].shape(), (ag::Shape{2, 1}));
  expect_near(out[0], {2, 6});
}

// The last two elements of x of any length: a start of Shape(x) - 2.
TEST(OnnxImportShapes, SliceTakesStartsComputedWhenTheGraphRuns) {
  Model m;
  m.input("x", TensorProto::FLOAT, {-1}).output("y", 1);
  m.ints("two", {2}).ints("end", {std::numeric_limits<int64_t>::max()});
  m.node("Shape", {"x"}, "n");
  m.node("Sub", {"n", "two"}, "start");
  m.node("Slice", {"x", "start", "end"}, "y");
  const ag::onnx::Model model = m.load();
  expect_near(model({ag::constant({1.0f, 2.0f, 3.0f, 4.0f, 5.0f})})[0], {4, 5});
  expect_near(model({ag::constant({7.0f, 8.0f, 9.0f})})[0], {8, 9});
  // A start before the first element is clamped to it, as ONNX says.
  expect_near(model({ag::constant({7.0f})})[0], {7});
}

// From the last element backwards to past the first, step -1.
TEST(OnnxImportShapes, SliceWithRunTimeStartsStepsBackwards) {
  Model m;
  m.input("x", TensorProto::FLOAT, {-1}).output("y", 1);
  m.ints("one", {1}).ints("end", {std::numeric_limits<int64_t>::min()});
  m.ints("axes", {0}).ints("steps", {-1});
  m.node("Shape", {"x"}, "n");
  m.node("Sub", {"n", "one"}, "start");
  m.node("Slice", {"x", "start", "end", "axes", "steps"}, "y");
  expect_near(m.load()({ag::constant({1.0f, 2.0f, 3.0f})})[0], {3, 2, 1});
}

// A float initializer of `dims`.
void floats(Model& m, const std::string& name, const std::vector<float>& values,
            const std::vector<int64_t>& dims) {
  TensorProto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

// What exporters write for a dynamic batch N of x [N, 4]: its shape's first
// entry, Gather'ed from Shape(x), concatenated with constants into the shapes
// of Reshape ([N, 2, 2]), Expand and Tile (of a row v [1, 4] to [N, 4]) and
// ConstantOfShape; a Reshape by a constant [0, 2, -1] whose 0 copies N; and
// Range(0, N, 1) of N squeezed to a scalar.
Model batch_shapes_model() {
  Model m;
  m.input("x", TensorProto::FLOAT, {-1, 4});
  for (const char* y : {"y", "expanded", "tiled", "filled", "copied"})
    m.output(y, std::string(y) == "expanded" || std::string(y) == "tiled" ? 2 : 3);
  m.output("steps", 1, TensorProto::INT64);
  m.ints("first", {0}).ints("two_two", {2, 2}).ints("four", {4}).ints("one", {1});
  for (auto [name, v] : {std::pair{"start", 0}, std::pair{"delta", 1}}) {
    TensorProto* t = m.proto().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::INT64);
    t->add_int64_data(v);
  }
  m.ints("zero_two_any", {0, 2, -1});
  floats(m, "v", {1.0f, -2.0f, 3.0f, 0.5f}, {1, 4});
  m.node("Shape", {"x"}, "shape");
  attr(m.node("Gather", {"shape", "first"}, "n"), "axis", int64_t{0});
  attr(m.node("Concat", {"n", "two_two"}, "n_2_2"), "axis", int64_t{0});
  attr(m.node("Concat", {"n", "four"}, "n_4"), "axis", int64_t{0});
  attr(m.node("Concat", {"n", "one"}, "n_1"), "axis", int64_t{0});
  m.node("Reshape", {"x", "n_2_2"}, "y");
  m.node("Expand", {"v", "n_4"}, "expanded");
  m.node("Tile", {"v", "n_1"}, "tiled");
  auto* fill = m.node("ConstantOfShape", {"n_2_2"}, "filled");
  auto* value = fill->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(TensorProto::FLOAT);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_float_data(1.5f);
  m.node("Reshape", {"x", "zero_two_any"}, "copied");
  m.node("Squeeze", {"n", "first"}, "n_scalar");
  m.node("Range", {"start", "n_scalar", "delta"}, "steps");
  return m;
}

// The outputs of batch_shapes_model for x = 0, 1, ... of [n, 4], worked out
// by hand: x itself as [n, 2, 2] (twice), v's row n times, 1.5 everywhere,
// 0 .. n - 1.
void expect_batch_shapes(const std::vector<ag::Tensor>& out, int64_t n) {
  ASSERT_EQ(out.size(), 6u);
  std::vector<double> x, rows, filled(size_t(n * 4), 1.5);
  for (int64_t i = 0; i < n * 4; ++i) x.push_back(double(i));
  for (int64_t i = 0; i < n; ++i) rows.insert(rows.end(), {1.0, -2.0, 3.0, 0.5});
  EXPECT_EQ(out[0].shape(), (ag::Shape{n, 2, 2}));
  expect_near(out[0], x);
  EXPECT_EQ(out[1].shape(), (ag::Shape{n, 4}));
  expect_near(out[1], rows);
  EXPECT_EQ(out[2].shape(), (ag::Shape{n, 4}));
  expect_near(out[2], rows);
  EXPECT_EQ(out[3].shape(), (ag::Shape{n, 2, 2}));
  expect_near(out[3], filled);
  EXPECT_EQ(out[4].shape(), (ag::Shape{n, 2, 2}));
  expect_near(out[4], x);
  std::vector<int64_t> steps(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) steps[size_t(i)] = i;
  EXPECT_EQ(out[5].to_vector<int64_t>(), steps);
}

ag::Tensor counting_rows(int64_t n) {
  std::vector<float> v(size_t(n * 4));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  return ag::constant(v, ag::Shape{n, 4});
}

TEST(OnnxImportShapes, ShapesComputedFromADynamicBatchAreReadWhenTheModelRuns) {
  const ag::onnx::Model model = batch_shapes_model().load();
  const std::vector<std::string> ops = model.graph().ops();
  for (const char* op : {"dynamic_reshape", "dynamic_broadcast_to", "dynamic_tile"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  // The shapes' constant entries are the outputs' dims while tracing; N is
  // read when the model runs.
  const ag::Graph graph = model.graph();
  std::vector<std::string> types;
  for (const auto& out : graph.body().outputs)
    types.push_back(graph.body().type_of(out).shape.to_list_string());
  EXPECT_EQ(types,
            (std::vector<std::string>{"[?,2,2]", "[?,4]", "[?,4]", "[?,2,2]", "[?,2,?]", "[?]"}));
  for (int64_t n : {3, 5}) expect_batch_shapes(model({counting_rows(n)}), n);
  // Saved (ONNX's checker) and loaded back, it computes the same.
  const std::string bytes = ag::onnx::save_to_bytes(model.graph(), {.graph_name = "batch"});
  const ag::onnx::Model again = ag::onnx::load_from_bytes(bytes, "batch.onnx");
  for (int64_t n : {3, 5}) expect_batch_shapes(again({counting_rows(n)}), n);
}

// Flatten at axis 1 of x [?, ?, 2]: [N, M * 2], both read when the model runs.
TEST(OnnxImportShapes, FlattenOfTwoUnknownDimsReadsThemWhenTheModelRuns) {
  Model m;
  m.input("x", TensorProto::FLOAT, {-1, -1, 2}).output("y", 2);
  attr(m.node("Flatten", {"x"}, "y"), "axis", int64_t{1});
  const ag::onnx::Model model = m.load();
  for (int64_t n : {2, 3}) {
    std::vector<float> v(size_t(n * 3 * 2));
    std::vector<double> expected;
    for (size_t i = 0; i < v.size(); ++i) {
      v[i] = float(i);
      expected.push_back(double(i));
    }
    const auto out = model({ag::constant(v, ag::Shape{n, 3, 2})});
    EXPECT_EQ(out[0].shape(), (ag::Shape{n, 6}));
    expect_near(out[0], expected);
  }
}

// A shape computed when the model runs that does not fit: the reshape's
// error, naming the shapes.
TEST(OnnxImportShapes, AShapeComputedWhenTheModelRunsThatDoesNotFitIsAnError) {
  Model m;
  m.input("x", TensorProto::FLOAT, {-1, 4}).output("y", 2);
  m.ints("first", {0}).ints("three", {3});
  m.node("Shape", {"x"}, "shape");
  attr(m.node("Gather", {"shape", "first"}, "n"), "axis", int64_t{0});
  attr(m.node("Concat", {"n", "three"}, "n_3"), "axis", int64_t{0});
  m.node("Reshape", {"x", "n_3"}, "y");
  try {
    m.load()({counting_rows(2)});
    ADD_FAILURE() << "reshaped 8 elements to [2, 3]";
  } catch (const ag::InvalidArgumentError& e) {
    EXPECT_NE(e.message().find("reshape: cannot reshape a tensor of shape [2,4] (8 elements) to "
                               "shape [2,3]"),
              std::string::npos)
        << e.message();
  }
}

TEST(OnnxImportComposed, HardSwishIsXTimesItsHardSigmoid) {
  onnx::NodeProto* n;
  Model m = unary("HardSwish", {5}, &n);
  expect_near(m.load()({ag::constant({-4.0f, -1.0f, 0.0f, 1.0f, 4.0f})})[0],
              {0, -1.0 / 3, 0, 2.0 / 3, 4});
}

TEST(OnnxImportComposed, CeluScalesTheNegativeSideByAlpha) {
  onnx::NodeProto* n;
  Model m = unary("Celu", {3}, &n);
  attr(n, "alpha", 2.0f);
  expect_near(m.load()({ag::constant({-1.0f, 0.0f, 2.0f})})[0], {2 * (std::exp(-0.5) - 1), 0, 2});
}

TEST(OnnxImportComposed, ShrinkZeroesWithinLambdAndMovesTheRestByBias) {
  onnx::NodeProto* n;
  Model m = unary("Shrink", {5}, &n);
  attr(n, "lambd", 1.5f);
  attr(n, "bias", 1.0f);
  expect_near(m.load()({ag::constant({-2.0f, -1.0f, 0.0f, 1.5f, 2.0f})})[0], {-1, 0, 0, 0, 1});
}

TEST(OnnxImportComposed, MeanVarianceNormalizationNormalisesOverAxes023) {
  onnx::NodeProto* n;
  Model m = unary("MeanVarianceNormalization", {1, 2, 1, 2}, &n);
  // Channel 0 holds 1, 2; channel 1 holds 3, 7.
  const auto y = m.load()({ag::reshape(ag::constant({1.0f, 2.0f, 3.0f, 7.0f}), {1, 2, 1, 2})})[0];
  expect_near(y, {-1, 1, -1, 1});
}

// alpha = size makes the divisor bias + the sum of the neighbours' squares.
TEST(OnnxImportComposed, LrnDividesByTheSquaresOfNeighbouringChannels) {
  onnx::NodeProto* n;
  Model m = unary("LRN", {1, 3, 1, 1}, &n);
  attr(n, "size", int64_t{3});
  attr(n, "alpha", 3.0f);
  attr(n, "beta", 1.0f);
  const auto y = m.load()({ag::reshape(ag::constant({1.0f, 2.0f, 3.0f}), {1, 3, 1, 1})})[0];
  expect_near(y, {1.0 / 6, 2.0 / 15, 3.0 / 14});
}

TEST(OnnxImportComposed, LrnOfAVectorIsAnErrorNamingTheNode) {
  onnx::NodeProto* n;
  Model m = unary("LRN", {3}, &n);
  attr(n, "size", int64_t{3});
  try {
    m.load();
    FAIL() << "expected an InvalidArgumentError";
  } catch (const ag::InvalidArgumentError& e) {
    EXPECT_EQ(e.message(), "g: LRN node 'y': the input must have rank 3 or more (N, C, D1, ...)");
  }
}

TEST(OnnxImportComposed, EyeLikeHasOnesOnDiagonalKOfTheDtypeAsked) {
  Model m;
  m.input("x", TensorProto::INT32, {2, 3}).output("y", 2, TensorProto::DOUBLE);
  auto* n = m.node("EyeLike", {"x"}, "y");
  attr(n, "k", int64_t{1});
  attr(n, "dtype", int64_t{TensorProto::DOUBLE});
  const auto y = m.load()({ag::constant({{0, 0, 0}, {0, 0, 0}})})[0];
  EXPECT_EQ(y.dtype(), ag::float64);
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{0, 1, 0, 0, 0, 1}));
}

// Window `op` of the length a graph input gives.
ag::Tensor window(const std::string& op, int64_t length, bool periodic) {
  Model m;
  m.input("n", TensorProto::INT64, {}).output("y", 1);
  attr(m.node(op, {"n"}, "y"), "periodic", int64_t{periodic});
  return m.load()({ag::Tensor(length)})[0];
}

TEST(OnnxImportComposed, WindowsFollowOnnxsCosineSums) {
  expect_near(window("HannWindow", 4, true), {0, 0.5, 1, 0.5});
  expect_near(window("HannWindow", 5, false), {0, 0.5, 1, 0.5, 0});
  expect_near(window("HammingWindow", 2, true), {4.0 / 46, 1});
  expect_near(window("BlackmanWindow", 4, true), {0, 0.34, 1, 0.34});
  EXPECT_EQ(window("HannWindow", 4, true).dtype(), ag::float32);
}

TEST(OnnxImportComposed, CompressKeepsTheSlicesTheConditionPicks) {
  Model m;
  m.input("x", TensorProto::FLOAT, {2, 3}).input("c", TensorProto::BOOL, {3}).output("y", 2);
  attr(m.node("Compress", {"x", "c"}, "y"), "axis", int64_t{1});
  const auto x = ag::constant({{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}});
  const ag::onnx::Model model = m.load();
  const auto y = model({x, ag::constant({false, true, true})})[0];
  EXPECT_EQ(y.shape(), (ag::Shape{2, 2}));
  expect_near(y, {2, 3, 5, 6});
  expect_near(model({x, ag::constant({true, false, false})})[0], {1, 4});
}

TEST(OnnxImportComposed, CompressWithoutAxisPicksFromTheFlattenedInput) {
  Model m;
  m.input("x", TensorProto::FLOAT, {2, 2}).input("c", TensorProto::BOOL, {5}).output("y", 1);
  m.node("Compress", {"x", "c"}, "y");
  const auto x = ag::constant({{1.0f, 2.0f}, {3.0f, 4.0f}});
  try {
    m.load()({x, ag::constant({true, false, false, true, true})});
    FAIL() << "expected an InvalidArgumentError";
  } catch (const ag::InvalidArgumentError& e) {
    EXPECT_NE(e.message().find("Compress node 'y': condition has 5 values for an axis of length 4"),
              std::string::npos)
        << e.message();
  }
  Model fits;
  fits.input("x", TensorProto::FLOAT, {2, 2}).input("c", TensorProto::BOOL, {3}).output("y", 1);
  fits.node("Compress", {"x", "c"}, "y");
  expect_near(fits.load()({x, ag::constant({true, false, true})})[0], {1, 3});
}

// Windows [[1, 5], [4, 3]] and [[5, 2], [3, 6]] of each channel; channel 1
// holds channel 0's values plus 10, 6 elements further on.
TEST(OnnxImportPools, MaxPoolsIndicesCountFromTheWholeTensor) {
  for (int64_t column_major : {0, 1}) {
    Model m;
    m.input("x", TensorProto::FLOAT, {1, 2, 2, 3})
        .output("y", 4)
        .output("i", 4, TensorProto::INT64);
    auto* n = m.node("MaxPool", {"x"}, "y");
    n->add_output("i");
    attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
    attr(n, "storage_order", column_major);
    const auto x = ag::constant(
        {1.0f, 5.0f, 2.0f, 4.0f, 3.0f, 6.0f, 11.0f, 15.0f, 12.0f, 14.0f, 13.0f, 16.0f});
    const auto out = m.load()({ag::reshape(x, {1, 2, 2, 3})});
    expect_near(out[0], {5, 6, 15, 16});
    EXPECT_EQ(out[1].shape(), (ag::Shape{1, 2, 1, 2}));
    EXPECT_EQ(out[1].to_vector<int64_t>(), column_major ? (std::vector<int64_t>{2, 5, 8, 11})
                                                        : (std::vector<int64_t>{1, 5, 7, 11}));
  }
}

TEST(OnnxImportPools, MaxUnpoolWritesAtTheIndicesAndPadsToTheOutputShape) {
  Model m;
  m.input("x", TensorProto::FLOAT, {1, 1, 1, 2}).input("i", TensorProto::INT64, {1, 1, 1, 2});
  m.input("shape", TensorProto::INT64, {4}).output("y", 4);
  attr(m.node("MaxUnpool", {"x", "i", "shape"}, "y"), "kernel_shape", std::vector<int64_t>{2, 2});
  const ag::onnx::Model model = m.load();
  const auto x = ag::reshape(ag::constant({5.0f, 6.0f}), {1, 1, 1, 2});
  const auto i = ag::reshape(ag::constant(std::vector<int64_t>{1, 5}, ag::Shape{2}), {1, 1, 1, 2});
  const auto y = model({x, i, ag::constant(std::vector<int64_t>{1, 1, 3, 3}, ag::Shape{4})})[0];
  EXPECT_EQ(y.shape(), (ag::Shape{1, 1, 3, 3}));
  expect_near(y, {0, 5, 0, 0, 0, 6, 0, 0, 0});
  try {
    model({x, i, ag::constant(std::vector<int64_t>{1, 1, 1, 3}, ag::Shape{4})});
    FAIL() << "expected an InvalidArgumentError";
  } catch (const ag::InvalidArgumentError& e) {
    EXPECT_NE(e.message().find("MaxUnpool node 'y': output_shape [1,1,1,3] must have the "
                               "input's batch and channels and cover the unpooled shape [1,1,"
                               "2,3]"),
              std::string::npos)
        << e.message();
  }
}

// Image [[1, 2], [3, 4]] sampled at its centre and at its top-left corner.
ag::Tensor grid_sample(const std::string& mode, const std::string& padding, int64_t align) {
  Model m;
  m.input("x", TensorProto::FLOAT, {1, 1, 2, 2}).input("grid", TensorProto::FLOAT, {1, 1, 2, 2});
  m.output("y", 4);
  auto* n = m.node("GridSample", {"x", "grid"}, "y");
  auto string_attr = [&](const std::string& name, const std::string& value) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
  };
  string_attr("mode", mode);
  string_attr("padding_mode", padding);
  attr(n, "align_corners", align);
  const auto x = ag::reshape(ag::constant({1.0f, 2.0f, 3.0f, 4.0f}), {1, 1, 2, 2});
  const auto grid = ag::reshape(ag::constant({0.0f, 0.0f, -1.0f, -1.0f}), {1, 1, 2, 2});
  return m.load()({x, grid})[0];
}

TEST(OnnxImportComposed, GridSampleFollowsItsModesAndPaddings) {
  // Without align_corners, -1 is the outer edge of the first pixel, half a
  // pixel out: a quarter of its value with zeros around, all of it at the border.
  expect_near(grid_sample("bilinear", "zeros", 0), {2.5, 0.25});
  expect_near(grid_sample("bilinear", "border", 0), {2.5, 1});
  expect_near(grid_sample("bilinear", "reflection", 0), {2.5, 1});
  expect_near(grid_sample("bilinear", "zeros", 1), {2.5, 1});
  // Rounding half to even: (0.5, 0.5) is pixel (0, 0), and so is (-0.5, -0.5).
  expect_near(grid_sample("nearest", "zeros", 0), {1, 1});
  EXPECT_EQ(grid_sample("bicubic", "border", 1).shape(), (ag::Shape{1, 1, 1, 2}));
  expect_near(grid_sample("bicubic", "border", 1), {2.5, 1});
}

// ag::linalg::det's elimination with partial pivoting, of matrices of any
// size (float64, where it is exact to the last bits here).
TEST(OnnxImportComposed, DetIsTheDeterminantOfEachMatrix) {
  Model m;
  m.input("x", TensorProto::DOUBLE, {2, 3, 3}).output("y", 1, TensorProto::DOUBLE);
  m.node("Det", {"x"}, "y");
  const auto x = ag::constant({2.0f, 0.0f, 1.0f, 1.0f, 3.0f, 2.0f, 1.0f, 1.0f, 1.0f,  //
                               1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 10.0f});
  // 2 * (3 - 2) - 0 + 1 * (1 - 3) = 0; 1 * 2 - 2 * (-2) + 3 * (-3) = -3.
  expect_near(m.load()({ag::cast(ag::reshape(x, {2, 3, 3}), ag::float64)})[0], {0, -3});
  // diag(1, 2, 3, 4, 5) with its first two rows swapped: -120.
  Model five;
  five.input("x", TensorProto::DOUBLE, {1, 5, 5}).output("y", 1, TensorProto::DOUBLE);
  five.node("Det", {"x"}, "y");
  std::vector<double> entries(25, 0.0);
  for (int i = 0; i < 5; ++i) entries[size_t((i < 2 ? 1 - i : i) * 5 + i)] = double(i + 1);
  const ag::Tensor matrix = ag::cast(ag::constant(entries, ag::Shape{1, 5, 5}), ag::float64);
  expect_near(five.load()({matrix})[0], {-120});
}

// Boxes by their centres, the second overlapping the first (IoU 0.818) and
// the third apart; each class picks on its own.
TEST(OnnxImportValueShaped, NonMaxSuppressionPicksPerBatchAndClass) {
  Model m;
  m.input("boxes", TensorProto::FLOAT, {1, 3, 4}).input("scores", TensorProto::FLOAT, {1, 2, 3});
  m.output("selected", 2, TensorProto::INT64).ints("max", {5});
  for (auto [name, value] : {std::pair{"iou", 0.5f}, std::pair{"score", 0.15f}}) {
    TensorProto* t = m.proto().mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::FLOAT);
    t->add_float_data(value);
  }
  attr(m.node("NonMaxSuppression", {"boxes", "scores", "max", "iou", "score"}, "selected"),
       "center_point_box", int64_t{1});
  const auto boxes = ag::reshape(
      ag::constant({0.5f, 0.5f, 1.0f, 1.0f, 0.5f, 0.6f, 1.0f, 1.0f, 10.5f, 0.5f, 1.0f, 1.0f}),
      {1, 3, 4});
  const auto scores = ag::reshape(ag::constant({0.9f, 0.8f, 0.7f, 0.1f, 0.95f, 0.2f}), {1, 2, 3});
  const auto selected = m.load()({boxes, scores})[0];
  EXPECT_EQ(selected.shape(), (ag::Shape{4, 3}));
  EXPECT_EQ(selected.to_vector<int64_t>(),
            (std::vector<int64_t>{0, 0, 0, 0, 0, 2, 0, 1, 1, 0, 1, 2}));
}

TEST(OnnxImportValueShaped, UniqueGivesValuesFirstIndicesInverseAndCounts) {
  Model m;
  m.input("x", TensorProto::FLOAT, {4, 2});
  m.output("y", 2).output("first", 1, TensorProto::INT64);
  m.output("inverse", 1, TensorProto::INT64).output("counts", 1, TensorProto::INT64);
  auto* n = m.node("Unique", {"x"}, "y");
  for (const char* out : {"first", "inverse", "counts"}) n->add_output(out);
  attr(n, "axis", int64_t{0});
  const auto out =
      m.load()({ag::constant({{2.0f, 1.0f}, {1.0f, 3.0f}, {2.0f, 1.0f}, {1.0f, 2.0f}})});
  expect_near(out[0], {1, 2, 1, 3, 2, 1});
  EXPECT_EQ(out[1].to_vector<int64_t>(), (std::vector<int64_t>{3, 1, 0}));
  EXPECT_EQ(out[2].to_vector<int64_t>(), (std::vector<int64_t>{2, 1, 2, 0}));
  EXPECT_EQ(out[3].to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 2}));
}

void string_attr(onnx::NodeProto* n, const std::string& name, const std::string& value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

// Index 1 twice: its updates combine in order.
TEST(OnnxImportComposed, ScatterNdReductionsCombineRepeatedIndices) {
  for (const auto& [reduction, expected] :
       {std::pair{std::string("mul"), std::vector<double>{1, 2 * 3 * 4, 3}},
        std::pair{std::string("max"), std::vector<double>{1, 4, 3}},
        std::pair{std::string("min"), std::vector<double>{1, 2, 3}}}) {
    Model m;
    m.input("data", TensorProto::FLOAT, {3}).input("updates", TensorProto::FLOAT, {2});
    m.output("y", 1).ints("indices", {1, 1});
    m.proto().mutable_graph()->mutable_initializer(0)->clear_dims();
    m.proto().mutable_graph()->mutable_initializer(0)->add_dims(2);
    m.proto().mutable_graph()->mutable_initializer(0)->add_dims(1);
    string_attr(m.node("ScatterND", {"data", "indices", "updates"}, "y"), "reduction", reduction);
    expect_near(m.load()({ag::constant({1.0f, 2.0f, 3.0f}), ag::constant({3.0f, 4.0f})})[0],
                expected);
  }
}

// [1, 2, 3, 4]: sums 10 and -2 + 2i, -2, -2 - 2i; the inverse gives the
// signal back.
TEST(OnnxImportComposed, DftOfARealSignalAndItsInverse) {
  Model m;
  m.input("x", TensorProto::FLOAT, {1, 4, 1}).output("y", 3).output("back", 3);
  m.node("DFT", {"x"}, "y");
  attr(m.node("DFT", {"y"}, "back"), "inverse", int64_t{1});
  const auto out = m.load()({ag::reshape(ag::constant({1.0f, 2.0f, 3.0f, 4.0f}), {1, 4, 1})});
  EXPECT_EQ(out[0].shape(), (ag::Shape{1, 4, 2}));
  expect_near(out[0], {10, 0, -2, 2, -2, 0, -2, -2});
  expect_near(out[1], {1, 0, 2, 0, 3, 0, 4, 0});
}

// One box over the whole 2 x 2 image, one bin of 2 x 2 samples at the
// pixels' centres (half_pixel): their mean.
TEST(OnnxImportComposed, RoiAlignAveragesTheBinsSamples) {
  Model m;
  m.input("x", TensorProto::FLOAT, {1, 1, 2, 2}).input("rois", TensorProto::FLOAT, {1, 4});
  m.output("y", 4).ints("batch", {0});
  auto* n = m.node("RoiAlign", {"x", "rois", "batch"}, "y");
  attr(n, "output_height", int64_t{1});
  attr(n, "output_width", int64_t{1});
  attr(n, "sampling_ratio", int64_t{2});
  const auto x = ag::reshape(ag::constant({1.0f, 2.0f, 3.0f, 5.0f}), {1, 1, 2, 2});
  const auto y = m.load()({x, ag::constant({{0.0f, 0.0f, 2.0f, 2.0f}})})[0];
  EXPECT_EQ(y.shape(), (ag::Shape{1, 1, 1, 1}));
  expect_near(y, {2.75});
}

// Edges at bins 0, 7, 16 and 24 (of 33): band 0 rises over rows 0 to 7 and
// falls to row 16, band 1 rises from row 7 to 16 and falls to row 24.
TEST(OnnxImportComposed, MelWeightMatrixHasOneTrianglePerBand) {
  Model m;
  m.input("n", TensorProto::INT64, {}).input("dft", TensorProto::INT64, {});
  m.input("rate", TensorProto::INT64, {}).input("lo", TensorProto::FLOAT, {});
  m.input("hi", TensorProto::FLOAT, {}).output("w", 2);
  m.node("MelWeightMatrix", {"n", "dft", "rate", "lo", "hi"}, "w");
  const auto w = m.load()({ag::Tensor(int64_t{2}), ag::Tensor(int64_t{64}), ag::Tensor(int64_t{64}),
                           ag::Tensor(0.0f), ag::Tensor(32.0f)})[0];
  EXPECT_EQ(w.shape(), (ag::Shape{33, 2}));
  const std::vector<float> v = w.to_vector<float>();
  auto at = [&](int row, int band) { return double(v[size_t(row * 2 + band)]); };
  EXPECT_NEAR(at(3, 0), 3.0 / 7, 1e-6);
  EXPECT_NEAR(at(7, 0), 1, 1e-6);
  EXPECT_NEAR(at(10, 0), 6.0 / 9, 1e-6);
  EXPECT_NEAR(at(10, 1), 3.0 / 9, 1e-6);
  EXPECT_NEAR(at(20, 1), 4.0 / 8, 1e-6);
  EXPECT_EQ(at(24, 1), 0);
  EXPECT_EQ(at(30, 0), 0);
}

// Running sums of x's rows from the last, stacked along axis 1.
TEST(OnnxImportComposed, ScanRunsItsBodyPerSliceInTheDirectionAsked) {
  Model m;
  m.input("s", TensorProto::FLOAT, {2}).input("x", TensorProto::FLOAT, {3, 2});
  m.output("final", 1).output("sums", 2);
  auto* n = m.node("Scan", {"s", "x"}, "final");
  n->add_output("sums");
  attr(n, "num_scan_inputs", int64_t{1});
  attr(n, "scan_input_directions", std::vector<int64_t>{1});
  attr(n, "scan_output_axes", std::vector<int64_t>{1});
  auto* body_attr = n->add_attribute();
  body_attr->set_name("body");
  body_attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = body_attr->mutable_g();
  body->set_name("body");
  for (const char* name : {"s_in", "row", "s_out", "sum"}) {
    onnx::ValueInfoProto* info = std::string(name) == "s_out" || std::string(name) == "sum"
                                     ? body->add_output()
                                     : body->add_input();
    info->set_name(name);
    auto* t = info->mutable_type()->mutable_tensor_type();
    t->set_elem_type(TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(2);
  }
  auto* add = body->add_node();
  add->set_op_type("Add");
  add->add_input("s_in");
  add->add_input("row");
  add->add_output("s_out");
  auto* copy = body->add_node();
  copy->set_op_type("Identity");
  copy->add_input("s_out");
  copy->add_output("sum");
  const auto out = m.load()(
      {ag::constant({0.0f, 0.0f}), ag::constant({{1.0f, 2.0f}, {3.0f, 4.0f}, {5.0f, 6.0f}})});
  expect_near(out[0], {9, 12});
  EXPECT_EQ(out[1].shape(), (ag::Shape{2, 3}));
  expect_near(out[1], {5, 8, 9, 6, 10, 12});
}

// Tokens 1 2 1 2 3: 1 occurs twice, 3 once, the bigram (1, 2) twice.
TEST(OnnxImportComposed, TfIdfVectorizerCountsNgramsAndWeighsThemByMode) {
  for (const auto& [mode, expected] :
       {std::pair{std::string("TF"), std::vector<double>{2, 1, 2}},
        std::pair{std::string("IDF"), std::vector<double>{0.5, 2, 0.25}},
        std::pair{std::string("TFIDF"), std::vector<double>{1, 2, 0.5}}}) {
    Model m;
    m.input("x", TensorProto::INT64, {5}).output("y", 1);
    auto* n = m.node("TfIdfVectorizer", {"x"}, "y");
    attr(n, "min_gram_length", int64_t{1});
    attr(n, "max_gram_length", int64_t{2});
    attr(n, "max_skip_count", int64_t{1});
    attr(n, "ngram_counts", std::vector<int64_t>{0, 2});
    attr(n, "ngram_indexes", std::vector<int64_t>{0, 1, 2});
    attr(n, "pool_int64s", std::vector<int64_t>{1, 3, 1, 2});
    string_attr(n, "mode", mode);
    auto* w = n->add_attribute();
    w->set_name("weights");
    w->set_type(onnx::AttributeProto::FLOATS);
    for (float v : {0.5f, 2.0f, 0.25f}) w->add_floats(v);
    const auto x = ag::constant(std::vector<int64_t>{1, 2, 1, 2, 3}, ag::Shape{5});
    expect_near(m.load()({x})[0], expected);
  }
}

// A crop from 0 to 1.5 times the last index: samples at 0, 1.5 and 3, the
// last past the input.
TEST(OnnxImportComposed, ResizeCropsAndResizesLinearlyWithAnExtrapolationValue) {
  Model m;
  m.input("x", TensorProto::FLOAT, {1, 3}).output("y", 2).ints("sizes", {1, 3});
  TensorProto* roi = m.proto().mutable_graph()->add_initializer();
  roi->set_name("roi");
  roi->set_data_type(TensorProto::FLOAT);
  roi->add_dims(4);
  for (float v : {0.0f, 0.0f, 1.0f, 1.5f}) roi->add_float_data(v);
  auto* n = m.node("Resize", {"x", "roi", "", "sizes"}, "y");
  string_attr(n, "mode", "linear");
  string_attr(n, "coordinate_transformation_mode", "tf_crop_and_resize");
  attr(n, "extrapolation_value", 7.0f);
  expect_near(m.load()({ag::constant({{0.0f, 10.0f, 20.0f}})})[0], {0, 15, 7});
}

// Nonzeros at (0, 1), (1, 0) and (1, 2), then none at all.
TEST(OnnxImportValueShaped, NonZeroGivesTheCoordinatesInRowMajorOrder) {
  Model m;
  m.input("x", TensorProto::FLOAT, {2, 3}).output("y", 2, TensorProto::INT64);
  m.node("NonZero", {"x"}, "y");
  const ag::onnx::Model model = m.load();
  const auto y = model({ag::constant({{0.0f, 5.0f, 0.0f}, {-1.0f, 0.0f, 2.0f}})})[0];
  EXPECT_EQ(y.shape(), (ag::Shape{2, 3}));
  EXPECT_EQ(y.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 1, 0, 2}));
  EXPECT_EQ(model({ag::zeros({2, 3})})[0].shape(), (ag::Shape{2, 0}));
}

}  // namespace
