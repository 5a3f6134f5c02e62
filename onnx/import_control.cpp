// Importers of ONNX's If and Loop: our staged if and while, whose branches
// and body import the node's subgraphs. A subgraph reads the values of the
// graphs around it by name, through the Scope.
//
// Loop(M, cond, v...) with body(i, cond_in, v_in...) -> (cond_out, v_out...,
// scan...) runs while (i < M) and cond; each scan output is written to a
// TensorArray at row i and stacked after the loop. The iteration count i is
// loop state only where something reads it (the trip count, scan outputs,
// the body), so a loop on a condition alone, like an exported while loop,
// runs the same ops per iteration as our while.
#include "ag/control_flow.h"
#include "ag/ops.h"
#include "ag/tensor_array.h"
#include "import_ops.h"
#include "tensor_proto.h"

namespace ag::onnx_io {

namespace {

// A condition of one element as a scalar; a scalar as it is (no reshape op).
Tensor scalar(const Tensor& t) {
  return t.rank() == 0 ? t : reshape(t, {});
}

// Whether a node of `graph`, of its subgraphs, or an output reads `name`.
bool reads(const ::onnx::GraphProto& graph, const std::string& name) {
  for (const auto& out : graph.output())
    if (out.name() == name) return true;
  for (const auto& node : graph.node()) {
    for (const std::string& in : node.input())
      if (in == name) return true;
    for (const auto& attr : node.attribute()) {
      if (attr.has_g() && reads(attr.g(), name)) return true;
      for (const auto& g : attr.graphs())
        if (reads(g, name)) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<Tensor> import_if(NodeContext& ctx) {
  const ::onnx::GraphProto& then_graph = ctx.attr_graph("then_branch");
  const ::onnx::GraphProto& else_graph = ctx.attr_graph("else_branch");
  const Tensor& pred = ctx.input(0);
  if (pred.num_elements() != 1 && pred.shape().is_fully_defined())
    ctx.invalid("the condition must have one element, got shape " + pred.shape().to_string());
  Tensor cond = scalar(pred);
  std::vector<Tensor> outputs(size_t(ctx.node().output_size()));
  auto branch = [&](const ::onnx::GraphProto& graph) {
    return [&] {
      std::vector<Tensor> values = run_graph(graph, {}, &ctx.scope(), ctx.opset());
      if (values.size() != outputs.size()) {
        ctx.invalid("branch '" + graph.name() + "' has " + std::to_string(values.size()) +
                    " outputs, the node " + std::to_string(outputs.size()));
      }
      outputs = std::move(values);
    };
  };
  if_stmt(cond, branch(then_graph), branch(else_graph), state({"If outputs"}, outputs));
  return outputs;
}

std::vector<Tensor> import_loop(NodeContext& ctx) {
  const ::onnx::GraphProto& body = ctx.attr_graph("body");
  const size_t num_vars = ctx.num_inputs() < 2 ? 0 : ctx.num_inputs() - 2;
  const int body_outputs = body.output_size();
  if (body_outputs < int(num_vars) + 1)
    ctx.invalid("the body must return the condition and every loop-carried value");
  const size_t num_scans = size_t(body_outputs) - 1 - num_vars;
  if (!ctx.has_input(0) && !ctx.has_input(1))
    ctx.unsupported("a Loop without a trip count and without a condition never ends");

  Tensor i = Tensor(int64_t{0});
  Tensor keep_going = ctx.has_input(1) ? scalar(ctx.input(1)) : Tensor(true);
  Tensor trip_count = ctx.has_input(0) ? scalar(ctx.input(0)) : Tensor();
  std::vector<Tensor> vars(ctx.inputs().begin() + 2, ctx.inputs().end());
  const bool counts = ctx.has_input(0) || num_scans > 0 ||
                      (body.input_size() > 0 && reads(body, body.input(0).name()));
  std::vector<TensorArray> scans;
  for (size_t k = 0; k < num_scans; ++k) {
    const auto& info = body.output(int(1 + num_vars + k));
    DType dtype = dtype_from_onnx(info.type().tensor_type().elem_type(),
                                  ctx.where() + ": scan output '" + info.name() + "'");
    scans.emplace_back(dtype, 0, /*dynamic_size=*/true);
  }

  auto test = [&] {
    return trip_count.defined() ? logical_and(less(i, trip_count), keep_going) : keep_going;
  };
  auto step = [&] {
    std::vector<Tensor> in{i, keep_going};
    in.insert(in.end(), vars.begin(), vars.end());
    std::vector<Tensor> out = run_graph(body, in, &ctx.scope(), ctx.opset());
    keep_going = scalar(out[0]);
    for (size_t k = 0; k < num_vars; ++k) vars[k] = out[1 + k];
    for (size_t k = 0; k < num_scans; ++k) scans[k] = scans[k].write(i, out[1 + num_vars + k]);
    if (counts) i = i + 1;
  };
  if (counts) {
    while_stmt(
        test, step,
        state({"iteration", "condition", "loop-carried", "scan"}, i, keep_going, vars, scans));
  } else {
    while_stmt(test, step, state({"condition", "loop-carried", "scan"}, keep_going, vars, scans));
  }

  std::vector<Tensor> results = vars;
  for (TensorArray& scan : scans) results.push_back(scan.stack());
  return results;
}

}  // namespace ag::onnx_io
