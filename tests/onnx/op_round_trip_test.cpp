// Every op of ag/ops.def through ONNX. Each op case of tests/runtime/op_cases.h,
// on each dtype its op supports, is traced, saved with ag::onnx::save (ONNX's
// checker with full shape inference), loaded back with ag::onnx::load and
// run: it gives what the eager call gives. OnnxOpCoverage checks the table's
// onnx column: every onnx("Type") is an op of the opset we write that the
// importer maps back, and every op with an ONNX form round trips in some case.
#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <ag/ag.h>
#include <ag/onnx.h>

#include "importer.h"
#include "op_cases.h"
#include "ops/op_registry.h"
#include "round_trip.h"

namespace {

using ag::DType;
using ag::Tensor;
using ag_test::all_op_cases;
using ag_test::OpCase;
using Tensors = std::vector<Tensor>;

constexpr int kExportOpset = 17;

struct Param {
  const OpCase* op;
  DType dtype;
};

std::vector<Param> params() {
  std::vector<Param> out;
  for (const OpCase& c : all_op_cases())
    for (DType d : c.dtypes) out.push_back({&c, d});
  return out;
}

void PrintTo(const Param& p, std::ostream* os) {
  *os << p.op->name << " on " << ag::dtype_name(p.dtype);
}

std::string param_name(const testing::TestParamInfo<Param>& info) {
  return info.param.op->name + "_" + std::string(ag::dtype_name(info.param.dtype));
}

ag::Graph trace(const OpCase& c, const Tensors& inputs) {
  auto traced = ag::function([op = c.op](const Tensors& xs) { return op(xs); });
  return traced.get_concrete_function(inputs).graph();
}

// The onnx column of each row: the ONNX type of a one-to-one form, and
// whether the op has an ONNX form at all.
struct OnnxRow {
  ag::ops::OpId id;
  const char* same_type;
  bool exportable;
};

constexpr OnnxRow kRows[] = {
#define AG_ROW_onnx(type) type, true
#define AG_ROW_onnx_compare(type) type, true
#define AG_ROW_onnx_reduce(type) nullptr, true
#define AG_ROW_onnx_by(form) nullptr, true
#define AG_ROW_onnx_none(why) nullptr, false
#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx) \
  {ag::ops::OpId::id, AG_ROW_##onnx},
#include "ag/ops.def"
#undef AG_OP
#undef AG_ROW_onnx
#undef AG_ROW_onnx_compare
#undef AG_ROW_onnx_reduce
#undef AG_ROW_onnx_by
#undef AG_ROW_onnx_none
};

std::string op_name(ag::ops::OpId id) {
  return std::string(ag::ops::op_def(id).name);
}

// The ops of `graph` whose rows say onnx_none.
std::set<std::string> ops_not_exportable(const ag::Graph& graph) {
  const std::vector<std::string> ops = graph.ops();
  std::set<std::string> found;
  for (const OnnxRow& row : kRows)
    if (!row.exportable && std::count(ops.begin(), ops.end(), op_name(row.id)))
      found.insert(op_name(row.id));
  return found;
}

// Empty when the case on `dtype` round trips to its eager value.
std::string round_trip(const OpCase& c, DType dtype) {
  const Tensors inputs = c.inputs(dtype);
  const Tensor eager = c.op(inputs);
  const std::string name = c.name + "_" + std::string(ag::dtype_name(dtype));
  return ag_onnx_test::round_trip(trace(c, inputs), name, inputs, {eager}, 1e-6);
}

class OnnxOpRoundTrip : public testing::TestWithParam<Param> {};

// A graph with an op marked onnx_none is an UnimplementedError naming the op;
// a model our importer cannot load, one naming what it cannot load.
TEST_P(OnnxOpRoundTrip, LoadedModelMatchesEagerCall) {
  const OpCase& c = *GetParam().op;
  const std::set<std::string> not_exportable =
      ops_not_exportable(trace(c, c.inputs(GetParam().dtype)));
  if (!not_exportable.empty()) {
    try {
      round_trip(c, GetParam().dtype);
      ADD_FAILURE() << "exported a graph with ops marked onnx_none";
    } catch (const ag::UnimplementedError& e) {
      const bool names_one =
          std::any_of(not_exportable.begin(), not_exportable.end(), [&](const std::string& op) {
            return e.message().find("(" + op + ") ") != std::string::npos;
          });
      EXPECT_TRUE(names_one) << e.message();
      EXPECT_NE(e.message().find("it is not exported"), std::string::npos) << e.message();
    }
    return;
  }
  EXPECT_EQ(round_trip(c, GetParam().dtype), "");
}

INSTANTIATE_TEST_SUITE_P(Ops, OnnxOpRoundTrip, testing::ValuesIn(params()), param_name);

TEST(OnnxOpCoverage, EveryOneToOneFormIsAnOnnxOpThatLoadsBack) {
  for (const OnnxRow& row : kRows) {
    if (!row.same_type) continue;
    EXPECT_NE(::onnx::OpSchemaRegistry::Schema(row.same_type, kExportOpset), nullptr)
        << op_name(row.id) << ": onnx(\"" << row.same_type << "\") is not an op of opset "
        << kExportOpset;
    EXPECT_NE(ag::onnx_io::find_importer(row.same_type), nullptr)
        << op_name(row.id) << ": ag::onnx::load has no importer of " << row.same_type;
  }
}

TEST(OnnxOpCoverage, EveryOpWithAnOnnxFormRoundTripsInSomeCase) {
  std::set<std::string> round_tripped;
  for (const OpCase& c : all_op_cases()) {
    const DType dtype = c.dtypes.front();
    try {
      if (!round_trip(c, dtype).empty()) continue;
      for (const std::string& op : trace(c, c.inputs(dtype)).ops()) round_tripped.insert(op);
    } catch (const ag::Error&) {
      // OnnxOpRoundTrip reports it.
    }
  }
  std::string missing;
  for (const OnnxRow& row : kRows)
    if (row.exportable && !round_tripped.count(op_name(row.id))) missing += " " + op_name(row.id);
  EXPECT_EQ(missing, "") << "ops with an ONNX form in ag/ops.def that no case of "
                            "tests/runtime/op_cases.cpp round trips (or mark them onnx_none):"
                         << missing;
}

}  // namespace
