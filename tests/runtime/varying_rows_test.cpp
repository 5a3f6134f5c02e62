// VaryingRows (runtime/control/varying_rows.h): which values of a loop body
// may change their row count between iterations. Bodies built by hand: loop
// variables, captures, and values computed from them.
#include "control/varying_rows.h"

#include <gtest/gtest.h>

#include <vector>

#include "ag/ag.h"
#include "body_builder.h"

namespace {

using ag::kUnknownDim;
using ag::detail::VaryingRows;
using namespace ag_test;

Attrs axis(int64_t a) {
  Attrs attrs;
  attrs.axis = a;
  return attrs;
}

Attrs ints(std::vector<int64_t> values) {
  Attrs attrs;
  attrs.ints = std::move(values);
  return attrs;
}

Attrs grows() {
  Attrs attrs;
  attrs.keepdims = true;
  return attrs;
}

// A loop body's inputs: an array grown by the loop (a loop variable of
// unknown rows), a loop counter, and captures: an array of unknown rows
// and a fixed row.
struct LoopBody {
  BodyBuilder b;
  ValueRef array = b.placeholder("loop_var", DType::float64, Shape{kUnknownDim, 3});
  ValueRef counter = b.placeholder("loop_var", DType::int64, Shape{});
  ValueRef fixed = b.placeholder("capture", DType::float64, Shape{kUnknownDim, 3});
  ValueRef row = b.placeholder("capture", DType::float64, Shape{3});
  std::vector<int32_t> captures = {fixed.node, row.node};

  VaryingRows analyse() const { return VaryingRows(b.body, captures); }
};

TEST(VaryingRows, LoopVariablesVaryCapturesDoNot) {
  LoopBody l;
  VaryingRows v = l.analyse();
  EXPECT_TRUE(v.rows_may_vary(l.array));
  EXPECT_FALSE(v.rows_may_vary(l.fixed));
  EXPECT_TRUE(v.value_may_vary(l.counter));
  EXPECT_FALSE(v.shape_may_vary(l.counter));  // a scalar
  EXPECT_FALSE(v.value_may_vary(l.row));
}

// The fuzzer's f_22_13: a mask computed from the grown array, cast, is as
// ragged as the array.
TEST(VaryingRows, ValuesComputedFromAVaryingArrayVary) {
  LoopBody l;
  ValueRef positive =
      l.b.op(OpId::Greater, {l.array, l.b.constant(ag::constant(0.0, DType::float64))});
  ValueRef small = l.b.op(OpId::Less, {l.array, l.b.constant(ag::constant(2.0, DType::float64))});
  ValueRef mask =
      l.b.op(OpId::Cast, {l.b.op(OpId::LogicalAnd, {positive, small})}, cast_to(DType::float64));
  ValueRef shifted = l.b.op(OpId::Add, {l.b.op(OpId::Tanh, {mask}), l.row});  // broadcast row
  ValueRef flipped =
      l.b.op(OpId::Transpose, {l.b.op(OpId::Transpose, {shifted}, ints({1, 0}))}, ints({1, 0}));
  VaryingRows v = l.analyse();
  for (ValueRef value : {positive, mask, shifted, flipped}) EXPECT_TRUE(v.rows_may_vary(value));
}

TEST(VaryingRows, ValuesComputedFromInvariantShapesDoNot) {
  LoopBody l;
  ValueRef scaled =
      l.b.op(OpId::Mul, {l.fixed, l.b.op(OpId::Cast, {l.counter}, cast_to(DType::float64))});
  ValueRef from_row = l.b.op(OpId::Add, {l.b.op(OpId::ExpandDims, {l.row}, axis(0)), l.fixed});
  ValueRef columns = l.b.op(OpId::ReduceSum, {l.array}, ints({0}));  // (3,): fixed by its type
  VaryingRows v = l.analyse();
  // The counter changes scaled's values, not its rows.
  EXPECT_TRUE(v.value_may_vary(scaled));
  EXPECT_FALSE(v.rows_may_vary(scaled));
  EXPECT_FALSE(v.rows_may_vary(from_row));
  EXPECT_FALSE(v.value_may_vary(from_row));
  EXPECT_TRUE(v.value_may_vary(columns));
  EXPECT_FALSE(v.shape_may_vary(columns));
}

// A transpose moves a varying dim to the front.
TEST(VaryingRows, AVaryingDimMovedToTheFrontVaries) {
  BodyBuilder b;
  ValueRef wide = b.placeholder("loop_var", DType::float64, Shape{3, kUnknownDim});
  ValueRef tall = b.op(OpId::Transpose, {wide}, ints({1, 0}));
  VaryingRows v(b.body, {});
  EXPECT_TRUE(v.shape_may_vary(wide));
  EXPECT_FALSE(v.rows_may_vary(wide));  // 3 rows in every iteration
  EXPECT_TRUE(v.rows_may_vary(tall));
}

// range's length follows its bounds' values: the counter's vary, the
// captured array's row count does not.
TEST(VaryingRows, ARangeVariesWithItsBoundsValues) {
  LoopBody l;
  ValueRef zero = l.b.constant(Tensor(int64_t{0})), one = l.b.constant(Tensor(int64_t{1}));
  ValueRef by_counter = l.b.op(OpId::Range, {zero, l.counter, one});
  ValueRef fixed_rows = l.b.op(OpId::Dim, {l.fixed}, axis(0));
  ValueRef by_fixed = l.b.op(OpId::Range, {zero, fixed_rows, one});
  ValueRef array_rows = l.b.op(OpId::Dim, {l.array}, axis(0));
  ValueRef by_array = l.b.op(OpId::Range, {zero, array_rows, one});
  ValueRef gathered = l.b.op(OpId::Gather, {l.fixed, by_counter}, axis(0));
  VaryingRows v = l.analyse();
  EXPECT_TRUE(v.rows_may_vary(by_counter));
  EXPECT_FALSE(v.value_may_vary(fixed_rows));
  EXPECT_FALSE(v.rows_may_vary(by_fixed));
  EXPECT_TRUE(v.value_may_vary(array_rows));
  EXPECT_TRUE(v.rows_may_vary(by_array));
  EXPECT_TRUE(v.rows_may_vary(gathered));  // as many rows as the range
}

// A growing write grows by a varying number of rows only when the array or
// the index varies.
TEST(VaryingRows, AGrowingWriteVariesWithItsArrayOrIndex) {
  LoopBody l;
  ValueRef zero = l.b.constant(Tensor(int64_t{0}));
  ValueRef at_zero = l.b.op(OpId::TensorArrayWrite, {l.fixed, zero, l.row}, grows());
  ValueRef at_counter = l.b.op(OpId::TensorArrayWrite, {l.fixed, l.counter, l.row}, grows());
  ValueRef into_array = l.b.op(OpId::TensorArrayWrite, {l.array, zero, l.row}, grows());
  VaryingRows v = l.analyse();
  EXPECT_FALSE(v.rows_may_vary(at_zero));
  EXPECT_TRUE(v.rows_may_vary(at_counter));
  EXPECT_TRUE(v.rows_may_vary(into_array));
}

// Nested control flow is taken to vary wherever its types leave a dim
// unknown, even with invariant inputs.
TEST(VaryingRows, NestedControlFlowVariesWhereItsTypeAllows) {
  LoopBody l;
  auto branch = [] {
    BodyBuilder body;
    ValueRef x = body.placeholder("x", DType::float64, Shape{kUnknownDim, 3});
    body.output(x);
    return body.finish();
  };
  ValueRef pred = l.b.constant(Tensor(true));
  ValueRef chosen = l.b.control_flow(NodeKind::If, {pred, l.fixed}, {branch(), branch()});
  VaryingRows v = l.analyse();
  EXPECT_TRUE(v.rows_may_vary(chosen));
  EXPECT_FALSE(v.rows_may_vary(l.fixed));
}

}  // namespace
