#include "importer.h"

#include <algorithm>
#include <unordered_map>

#include "ag/error.h"
#include "ag/ops.h"
#include "import_ops.h"
#include "ops/dispatch.h"
#include "tensor_proto.h"
#include "trace/trace_state.h"

namespace ag::onnx_io {

using ::onnx::AttributeProto;

const Tensor* Scope::find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->outer_) {
    auto it = s->values_.find(name);
    if (it != s->values_.end()) return &it->second;
  }
  return nullptr;
}

const ::onnx::NodeProto* Scope::producer(const std::string& name) const {
  auto it = producers_.find(name);
  return it == producers_.end() ? nullptr : it->second;
}

NodeContext::NodeContext(const ::onnx::NodeProto& node, std::vector<Tensor> inputs, int64_t opset,
                         const Scope& scope)
    : node_(node), inputs_(std::move(inputs)), opset_(opset), scope_(scope) {}

namespace {

// A node's name, or its first output's when it has none.
std::string node_name(const ::onnx::NodeProto& node) {
  if (node.name().empty() && node.output_size() > 0) return node.output(0);
  return node.name();
}

}  // namespace

std::string NodeContext::where() const {
  return node_.op_type() + " node '" + node_name(node_) + "'";
}

void NodeContext::unsupported(const std::string& what) const {
  throw UnimplementedError(where() + ": " + what);
}

void NodeContext::invalid(const std::string& what) const {
  throw InvalidArgumentError(where() + ": " + what);
}

const ::onnx::NodeProto* NodeContext::producer(size_t k) const {
  return k < size_t(node_.input_size()) ? scope_.producer(node_.input(int(k))) : nullptr;
}

const Tensor& NodeContext::input(size_t k) const {
  if (!has_input(k)) invalid("input " + std::to_string(k) + " is required");
  return inputs_[k];
}

const Tensor& NodeContext::known_input(size_t k, std::string_view what) const {
  const Tensor& t = input(k);
  if (t.is_symbolic()) {
    throw NeedsValue{t.id(), where() + ": " + std::string(what) +
                                 " must be known when the model is traced (an initializer, a "
                                 "Constant, a graph input, or computed from them and from static "
                                 "shapes); here it is computed at run time"};
  }
  return t;
}

std::vector<int64_t> NodeContext::constant_ints(size_t k, std::string_view what) const {
  const Tensor& t = known_input(k, what);
  if (is_floating(t.dtype()) || t.rank() > 1)
    invalid(std::string(what) + " must be a 1-D integer tensor, got " + t.spec().to_string());
  return t.to_vector<int64_t>();
}

std::vector<double> NodeContext::constant_doubles(size_t k, std::string_view what) const {
  const Tensor& t = known_input(k, what);
  if (t.rank() > 1)
    invalid(std::string(what) + " must be a scalar or 1-D tensor, got " + t.spec().to_string());
  return cast(t, DType::float64).to_vector<double>();
}

const AttributeProto* NodeContext::find_attr(std::string_view name) const {
  for (const AttributeProto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

const AttributeProto& NodeContext::require_attr(std::string_view name, int type) const {
  const AttributeProto* a = find_attr(name);
  if (!a) invalid("attribute '" + std::string(name) + "' is required");
  if (a->type() != type) {
    invalid("attribute '" + std::string(name) + "' has type " +
            AttributeProto::AttributeType_Name(a->type()) + ", expected " +
            AttributeProto::AttributeType_Name(static_cast<AttributeProto::AttributeType>(type)));
  }
  return *a;
}

int64_t NodeContext::attr_int(std::string_view name, int64_t fallback) const {
  return has_attr(name) ? attr_int(name) : fallback;
}

int64_t NodeContext::attr_int(std::string_view name) const {
  return require_attr(name, AttributeProto::INT).i();
}

float NodeContext::attr_float(std::string_view name, float fallback) const {
  return has_attr(name) ? require_attr(name, AttributeProto::FLOAT).f() : fallback;
}

std::string NodeContext::attr_string(std::string_view name, std::string fallback) const {
  return has_attr(name) ? require_attr(name, AttributeProto::STRING).s() : fallback;
}

std::vector<int64_t> NodeContext::attr_ints(std::string_view name) const {
  const auto& ints = require_attr(name, AttributeProto::INTS).ints();
  return {ints.begin(), ints.end()};
}

std::vector<float> NodeContext::attr_floats(std::string_view name) const {
  const auto& floats = require_attr(name, AttributeProto::FLOATS).floats();
  return {floats.begin(), floats.end()};
}

const ::onnx::TensorProto& NodeContext::attr_tensor(std::string_view name) const {
  return require_attr(name, AttributeProto::TENSOR).t();
}

const ::onnx::GraphProto& NodeContext::attr_graph(std::string_view name) const {
  return require_attr(name, AttributeProto::GRAPH).g();
}

int64_t NodeContext::normalize_axis(int64_t axis, int64_t rank, std::string_view what) const {
  if (axis < -rank || axis >= rank) {
    invalid(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
            std::to_string(rank) + " (expected [" + std::to_string(-rank) + ", " +
            std::to_string(rank) + "))");
  }
  return axis < 0 ? axis + rank : axis;
}

const Shape& NodeContext::static_shape(size_t k, std::string_view why) const {
  const Shape& shape = input(k).shape();
  if (!shape.is_fully_defined()) {
    unsupported("input " + std::to_string(k) + " has shape " + shape.to_string() + "; " +
                std::string(why) + " needs every dim known when the model is loaded");
  }
  return shape;
}

namespace {

struct Entry {
  std::string_view op_type;
  ImportFn fn;
};

constexpr Entry kImporters[] = {
#define AG_ONNX_OP(op_type, fn) {#op_type, &fn},
#include "ops.def"
#undef AG_ONNX_OP
};

// The import of an op whose ag/ops.def row says onnx("Type") or
// onnx_compare("Type"): the node's
// inputs, as they are (a binary op's with the broadcast of opsets before 7),
// to the op.
template <ops::OpId kId, int kArity>
std::vector<Tensor> import_same_op(NodeContext& ctx) {
  if (kArity >= 0 && ctx.num_inputs() != size_t(kArity)) {
    ctx.invalid("expected " + std::to_string(kArity) + " inputs, got " +
                std::to_string(ctx.num_inputs()));
  }
  // Attributes of older opsets that the form keeps: a binary op's broadcast
  // (operands()), and consumed_inputs, which only named buffers to reuse.
  for (const ::onnx::AttributeProto& attr : ctx.node().attribute()) {
    const bool kept = attr.name() == "consumed_inputs" ||
                      (kArity == 2 && (attr.name() == "broadcast" || attr.name() == "axis"));
    if (!kept) ctx.unsupported("attribute '" + attr.name() + "' is not supported");
  }
  std::vector<Tensor> inputs;
  if constexpr (kArity == 2) {
    auto [a, b] = operands(ctx);
    inputs = {a, b};
  } else {
    for (size_t k = 0; k < ctx.num_inputs(); ++k) inputs.push_back(ctx.input(k));
  }
  return {ops::apply(kId, inputs, {}, {})};
}

struct SameOp {
  const char* op_type;  // null: the op's ONNX form is not one op on the same inputs
  ImportFn fn;
};

constexpr SameOp kSameOps[] = {
#define AG_SAME_onnx(type) type
#define AG_SAME_onnx_compare(type) type
#define AG_SAME_onnx_reduce(type) nullptr
#define AG_SAME_onnx_by(form) nullptr
#define AG_SAME_onnx_none(why) nullptr
#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx) \
  {AG_SAME_##onnx, &import_same_op<ops::OpId::id, arity>},
#include "ag/ops.def"
#undef AG_OP
#undef AG_SAME_onnx
#undef AG_SAME_onnx_compare
#undef AG_SAME_onnx_reduce
#undef AG_SAME_onnx_by
#undef AG_SAME_onnx_none
};

}  // namespace

void rethrow_at(const Error& e, const std::string& where) {
  // Messages from importers already name their node.
  if (e.message().rfind(where, 0) == 0) throw;
  detail::throw_error(e.kind(), where + ": " + e.message());
}

namespace {

std::vector<Tensor> import_node(const ::onnx::NodeProto& node, const Scope& scope, int64_t opset) {
  std::vector<Tensor> inputs;
  for (const std::string& name : node.input()) {
    if (name.empty()) {
      inputs.emplace_back();
      continue;
    }
    const Tensor* value = scope.find(name);
    if (!value) {
      throw InvalidArgumentError(node.op_type() + " node '" + node.name() + "': input '" + name +
                                 "' is not defined before the node");
    }
    inputs.push_back(*value);
  }
  NodeContext ctx(node, std::move(inputs), opset, scope);
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    ctx.unsupported("ops of domain '" + node.domain() + "' are not supported");
  ImportFn fn = find_importer(node.op_type());
  if (!fn) {
    ctx.unsupported("op type '" + node.op_type() +
                    "' is not supported (ag::onnx::load maps the ops listed in docs/onnx.md)");
  }
  try {
    // Its ops' nodes take its name, and its name shows in their run-time errors.
    trace::ImportedNodeScope named(node_name(node));
    return fn(ctx);
  } catch (const Error& e) {
    rethrow_at(e, ctx.where());
  }
}

}  // namespace

namespace {

bool is_initializer(const ::onnx::GraphProto& graph, const std::string& name) {
  return std::any_of(graph.initializer().begin(), graph.initializer().end(),
                     [&](const auto& init) { return init.name() == name; });
}

}  // namespace

ImportFn find_importer(std::string_view op_type) {
  for (const Entry& e : kImporters)
    if (e.op_type == op_type) return e.fn;
  for (const SameOp& op : kSameOps)
    if (op.op_type && op.op_type == op_type) return op.fn;
  return nullptr;
}

void bind_initializers(const ::onnx::GraphProto& graph, Scope& scope,
                       const InitializerVariables* variables) {
  for (const auto& init : graph.initializer()) {
    if (variables) {
      if (auto it = variables->find(init.name()); it != variables->end()) {
        scope.bind(init.name(), it->second.read());
        continue;
      }
    }
    scope.bind(init.name(), tensor_from_proto(init, "initializer '" + init.name() + "'"));
  }
}

void run_node(const ::onnx::NodeProto& node, Scope& scope, int64_t opset) {
  std::vector<Tensor> outputs = import_node(node, scope, opset);
  if (outputs.size() < size_t(node.output_size())) {
    throw UnimplementedError(node.op_type() + " node '" + node.name() + "': output " +
                             std::to_string(outputs.size()) + " is not supported");
  }
  for (int k = 0; k < node.output_size(); ++k) {
    if (node.output(k).empty()) continue;
    scope.bind(node.output(k), outputs[size_t(k)]);
    scope.set_producer(node.output(k), node);
  }
}

std::vector<Tensor> run_graph(const ::onnx::GraphProto& graph, const std::vector<Tensor>& inputs,
                              const Scope* outer, int64_t opset,
                              const InitializerVariables* variables) {
  Scope scope(outer);
  bind_initializers(graph, scope, variables);
  size_t next = 0;
  for (const auto& in : graph.input()) {
    if (is_initializer(graph, in.name())) continue;
    if (next == inputs.size()) {
      throw InvalidArgumentError("graph '" + graph.name() + "' has more inputs than the " +
                                 std::to_string(inputs.size()) + " given");
    }
    scope.bind(in.name(), inputs[next++]);
  }
  if (next != inputs.size()) {
    throw InvalidArgumentError("graph '" + graph.name() + "' takes " + std::to_string(next) +
                               " inputs, but " + std::to_string(inputs.size()) + " were given");
  }
  for (const auto& node : graph.node()) run_node(node, scope, opset);
  std::vector<Tensor> results;
  for (const auto& out : graph.output()) {
    const Tensor* value = scope.find(out.name());
    if (!value) {
      throw InvalidArgumentError("graph '" + graph.name() + "': output '" + out.name() +
                                 "' is never computed");
    }
    results.push_back(*value);
  }
  return results;
}

}  // namespace ag::onnx_io
