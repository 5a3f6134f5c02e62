// Importers of ONNX's If and Loop: our staged if and while, whose branches
// and body import the node's subgraphs. A subgraph reads the values of the
// graphs around it by name, through the Scope.
//
// Loop(M, cond, v...) with body(i, cond_in, v_in...) -> (cond_out, v_out...,
// scan...) runs while (i < M) and cond; each scan output is written to a
// TensorArray at row i and stacked after the loop. The iteration count i is
// loop state only where something reads it (the trip count, scan outputs,
// the body); a trip count known at load time that only bounds the loop is
// the while's maximum_iterations. The condition is loop state only where
// the body computes it: a body that passes it on (cond_out = cond_in, the
// usual for loop) leaves it as it was.
//
// The exporter writes our while as a Loop whose first condition is computed
// before it, from the loop variables' initial values, and whose body ends by
// computing the next one from the new values with the same nodes
// (onnx/exporter.cpp, emit_while). Where the nodes before the Loop are
// checked to be the body's nodes, node for node, the condition is imported
// as the while's test, called on the variables, instead of a variable of its
// own: the loop runs the ops the traced while ran, and the copies before the
// loop and in the body are dead code.
#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>

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

// Whether the body's condition output is its condition input, past Identity
// nodes: the condition never changes.
bool passes_on_condition(const ::onnx::GraphProto& body) {
  if (body.input_size() < 2) return false;
  std::string name = body.output(0).name();
  for (bool forwarded = true; forwarded;) {
    forwarded = false;
    for (const auto& node : body.node()) {
      if (node.op_type() == "Identity" && node.output(0) == name) {
        name = node.input(0);
        forwarded = true;
        break;
      }
    }
  }
  return name == body.input(1).name();
}

// A tensor known at load time with the same dtype, shape and bits as `b`.
bool same_constant(const Tensor* a, const Tensor* b) {
  if (!a || !b || a->is_symbolic() || b->is_symbolic() || a->dtype() != b->dtype() ||
      a->shape() != b->shape())
    return false;
  const size_t bytes = size_t(a->num_elements()) * dtype_size(a->dtype());
  return bytes == 0 || std::memcmp(a->raw_data(), b->raw_data(), bytes) == 0;
}

// The condition of a Loop as a function of its loop variables, when the
// Loop's condition input is that function of their initial values and the
// body's condition output that function of their new values.
class ConditionOfVariables {
 public:
  // Null unless the condition input's nodes are the body's, node for node:
  // the same op types and attributes on matching inputs, where the body's
  // new value of variable k matches the Loop's input for it, and values
  // neither graph computes (initializers, graph inputs, values of enclosing
  // graphs) match when they are the same value or equal constants.
  static std::optional<ConditionOfVariables> find(const NodeContext& ctx,
                                                  const ::onnx::GraphProto& body, size_t num_vars);
  // The condition for the current `vars`, traced from the body's nodes.
  Tensor operator()(const std::vector<Tensor>& vars) const;

 private:
  ConditionOfVariables(const NodeContext& ctx, const ::onnx::GraphProto& body, size_t num_vars);
  // Whether the value `in_body` of the body has the value `outside` of the
  // Loop's graph. Adds the body's nodes it compares to `nodes_`.
  bool same_value(const std::string& in_body, const std::string& outside);
  bool same_node(const ::onnx::NodeProto& in_body, const std::string& in_body_value,
                 const ::onnx::NodeProto& outside, const std::string& outside_value);
  // `name` past the Identity nodes of the Loop's graph that forward it.
  std::string past_identities(std::string name) const;

  const NodeContext* ctx_;
  const ::onnx::GraphProto* body_;
  // The body's names for the new value of each loop variable: its output
  // and, when an Identity computes that, the Identity's input.
  std::unordered_map<std::string, size_t> variable_of_;
  std::unordered_map<std::string, const ::onnx::NodeProto*> body_producers_;
  std::unordered_set<std::string> body_inputs_;
  Scope body_constants_;  // the body's initializers, then the Loop's scope
  // The body's values compared so far, and the outside values they matched.
  std::unordered_map<std::string, std::string> matched_;
  std::unordered_set<const ::onnx::NodeProto*> nodes_;
};

ConditionOfVariables::ConditionOfVariables(const NodeContext& ctx, const ::onnx::GraphProto& body,
                                           size_t num_vars)
    : ctx_(&ctx), body_(&body), body_constants_(&ctx.scope()) {
  for (const auto& node : body.node())
    for (const std::string& out : node.output()) body_producers_[out] = &node;
  for (const auto& in : body.input()) body_inputs_.insert(in.name());
  bind_initializers(body, body_constants_);
  for (size_t k = 0; k < num_vars; ++k) {
    const std::string& out = body.output(int(1 + k)).name();
    variable_of_.emplace(out, k);
    auto it = body_producers_.find(out);
    if (it != body_producers_.end() && it->second->op_type() == "Identity")
      variable_of_.emplace(it->second->input(0), k);
  }
}

std::optional<ConditionOfVariables> ConditionOfVariables::find(const NodeContext& ctx,
                                                               const ::onnx::GraphProto& body,
                                                               size_t num_vars) {
  if (!ctx.has_input(1) || body.input_size() != int(2 + num_vars) ||
      reads(body, body.input(1).name()))
    return std::nullopt;
  ConditionOfVariables condition(ctx, body, num_vars);
  if (!condition.same_value(body.output(0).name(), ctx.node().input(1))) return std::nullopt;
  return condition;
}

std::string ConditionOfVariables::past_identities(std::string name) const {
  while (const ::onnx::NodeProto* node = ctx_->scope().producer(name)) {
    if (node->op_type() != "Identity") break;
    name = node->input(0);
  }
  return name;
}

bool ConditionOfVariables::same_value(const std::string& in_body, const std::string& outside) {
  if (auto var = variable_of_.find(in_body); var != variable_of_.end())
    return past_identities(outside) == past_identities(ctx_->node().input(int(2 + var->second)));
  auto producer = body_producers_.find(in_body);
  if (producer != body_producers_.end() && producer->second->op_type() == "Identity") {
    nodes_.insert(producer->second);
    return same_value(producer->second->input(0), outside);
  }
  const std::string value = past_identities(outside);
  if (producer == body_producers_.end()) {
    if (body_inputs_.contains(in_body)) return false;  // an old value, or the iteration count
    const Tensor *a = body_constants_.find(in_body), *b = ctx_->scope().find(value);
    return a && (a == b || same_constant(a, b));
  }
  if (auto seen = matched_.find(in_body); seen != matched_.end()) return seen->second == value;
  const ::onnx::NodeProto* other = ctx_->scope().producer(value);
  if (!other || !same_node(*producer->second, in_body, *other, value)) return false;
  matched_.emplace(in_body, value);
  nodes_.insert(producer->second);
  return true;
}

bool ConditionOfVariables::same_node(const ::onnx::NodeProto& in_body,
                                     const std::string& in_body_value,
                                     const ::onnx::NodeProto& outside,
                                     const std::string& outside_value) {
  auto position = [](const ::onnx::NodeProto& node, const std::string& value) {
    return std::find(node.output().begin(), node.output().end(), value) - node.output().begin();
  };
  if (in_body.op_type() != outside.op_type() || in_body.domain() != outside.domain() ||
      in_body.input_size() != outside.input_size() ||
      in_body.attribute_size() != outside.attribute_size() ||
      position(in_body, in_body_value) != position(outside, outside_value))
    return false;
  // Attributes holding graphs name their values afresh, so they differ.
  for (int k = 0; k < in_body.attribute_size(); ++k) {
    if (in_body.attribute(k).SerializeAsString() != outside.attribute(k).SerializeAsString())
      return false;
  }
  for (int k = 0; k < in_body.input_size(); ++k) {
    const std::string &a = in_body.input(k), &b = outside.input(k);
    if (a.empty() != b.empty() || (!a.empty() && !same_value(a, b))) return false;
  }
  return true;
}

Tensor ConditionOfVariables::operator()(const std::vector<Tensor>& vars) const {
  Scope scope(&body_constants_);
  for (const auto& [name, k] : variable_of_) scope.bind(name, vars[k]);
  for (const auto& node : body_->node())
    if (nodes_.contains(&node)) run_node(node, scope, ctx_->opset());
  return scalar(*scope.find(body_->output(0).name()));
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

  // The condition is loop state unless it is a function of the variables
  // (the exporter's while) or the body passes it on unchanged (ONNX's usual
  // for loop): then it is the Loop's first one throughout, or always true
  // (undefined here) without one.
  const std::optional<ConditionOfVariables> condition =
      ConditionOfVariables::find(ctx, body, num_vars);
  const Tensor first_condition = ctx.has_input(1) ? scalar(ctx.input(1)) : Tensor();
  std::vector<Tensor> carried_condition;
  if (!condition && !passes_on_condition(body))
    carried_condition.push_back(first_condition.defined() ? first_condition : Tensor(true));
  const bool reads_count =
      num_scans > 0 || (body.input_size() > 0 && reads(body, body.input(0).name()));
  WhileOptions options;
  Tensor trip_count;
  if (ctx.has_input(0)) {
    trip_count = scalar(ctx.input(0));
    if (!reads_count && !trip_count.is_symbolic()) {
      // No iteration at all for a negative trip count, as for i < M.
      options.maximum_iterations = std::max(trip_count.item<int64_t>(), int64_t{0});
      trip_count = Tensor();
    }
  }
  std::vector<Tensor> count;
  if (reads_count || trip_count.defined()) count.push_back(Tensor(int64_t{0}));
  std::vector<Tensor> vars(ctx.inputs().begin() + 2, ctx.inputs().end());
  std::vector<TensorArray> scans;
  for (size_t k = 0; k < num_scans; ++k) {
    const auto& info = body.output(int(1 + num_vars + k));
    DType dtype = dtype_from_onnx(info.type().tensor_type().elem_type(),
                                  ctx.where() + ": scan output '" + info.name() + "'");
    scans.emplace_back(dtype, 0, /*dynamic_size=*/true);
  }

  auto test = [&] {
    const Tensor go = condition                   ? (*condition)(vars)
                      : carried_condition.empty() ? first_condition
                                                  : carried_condition[0];
    if (!trip_count.defined()) return go.defined() ? go : Tensor(true);
    const Tensor below = less(count[0], trip_count);
    return go.defined() ? logical_and(below, go) : below;
  };
  auto step = [&] {
    // The body does not read the iteration count where it is not loop state,
    // nor the condition where it is a function of the variables.
    std::vector<Tensor> in{count.empty() ? Tensor(int64_t{0}) : count[0],
                           !carried_condition.empty()  ? carried_condition[0]
                           : first_condition.defined() ? first_condition
                                                       : Tensor(true)};
    in.insert(in.end(), vars.begin(), vars.end());
    std::vector<Tensor> out = run_graph(body, in, &ctx.scope(), ctx.opset());
    if (!carried_condition.empty()) carried_condition[0] = scalar(out[0]);
    for (size_t k = 0; k < num_vars; ++k) vars[k] = out[1 + k];
    for (size_t k = 0; k < num_scans; ++k)
      scans[k] = scans[k].write(count[0], out[1 + num_vars + k]);
    if (!count.empty()) count[0] = count[0] + 1;
  };
  while_stmt(test, step,
             state({"iteration", "condition", "loop-carried", "scan"}, count, carried_condition,
                   vars, scans),
             options);

  std::vector<Tensor> results = vars;
  for (TensorArray& scan : scans) results.push_back(scan.stack());
  return results;
}

}  // namespace ag::onnx_io
