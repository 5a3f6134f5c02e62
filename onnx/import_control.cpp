// Importers of ONNX's If and Loop: our staged if and while, whose branches
// and body import the node's subgraphs. A subgraph reads the values of the
// graphs around it by name, through the Scope.
//
// Loop(M, cond, v...) with body(i, cond_in, v_in...) -> (cond_out, v_out...,
// scan...) runs while (i < M) and cond; each scan output is written to a
// TensorArray at row i and stacked after the loop.
#include "ag/control_flow.h"
#include "ag/ops.h"
#include "ag/tensor_array.h"
#include "import_ops.h"
#include "tensor_proto.h"

namespace ag::onnx_io {

std::vector<Tensor> import_if(NodeContext& ctx) {
  const ::onnx::GraphProto& then_graph = ctx.attr_graph("then_branch");
  const ::onnx::GraphProto& else_graph = ctx.attr_graph("else_branch");
  const Tensor& pred = ctx.input(0);
  if (pred.num_elements() != 1 && pred.shape().is_fully_defined())
    ctx.invalid("the condition must have one element, got shape " + pred.shape().to_string());
  Tensor cond = reshape(pred, {});
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
  Tensor keep_going = ctx.has_input(1) ? reshape(ctx.input(1), {}) : Tensor(true);
  Tensor trip_count = ctx.has_input(0) ? reshape(ctx.input(0), {}) : Tensor();
  std::vector<Tensor> vars(ctx.inputs().begin() + 2, ctx.inputs().end());
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
    keep_going = reshape(out[0], {});
    for (size_t k = 0; k < num_vars; ++k) vars[k] = out[1 + k];
    for (size_t k = 0; k < num_scans; ++k) scans[k] = scans[k].write(i, out[1 + num_vars + k]);
    i = i + 1;
  };
  while_stmt(test, step,
             state({"iteration", "condition", "loop-carried", "scan"}, i, keep_going, vars, scans));

  std::vector<Tensor> results = vars;
  for (TensorArray& scan : scans) results.push_back(scan.stack());
  return results;
}

}  // namespace ag::onnx_io
