// Tracing: the thread's current trace, turning tensors into values of the
// body being built (constants, captures), recording ops, and the errors for
// leaked or value-read symbolic tensors.
#include "trace/tracer.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor_impl.h"
#include "ops/dispatch.h"
#include "trace/trace_state.h"

namespace ag::trace {
namespace {

thread_local std::shared_ptr<TraceState> t_current;

std::string describe(const detail::TensorImpl& impl) {
  return "ag::Tensor '" + trace::symbolic_name(impl) + "' (shape=" + impl.shape.to_string() +
         ", dtype=" + std::string(dtype_name(impl.dtype)) + ")";
}

bool is_ancestor(const TraceState* ancestor, const TraceState* of) {
  for (const TraceState* s = of; s; s = s->parent) {
    if (s == ancestor) return true;
  }
  return false;
}

[[noreturn]] void throw_leak(const detail::TensorImpl& impl) {
  throw FailedPreconditionError(
      describe(impl) + " leaked from function '" + impl.trace->function_name +
      "': it was made while tracing that function and is out of scope here. All outputs of an "
      "ag::function must be return values: return the tensor, or keep state in an ag::Variable.");
}

// core and ops sit below tracing and reach it through hooks; a symbolic
// tensor exists only inside a trace, so installing them when the first trace
// starts is early enough.
void install_hooks() {
  static const bool installed = [] {
    detail::install_symbolic_tensor_hooks({&trace::symbolic_name, &trace::throw_value_access});
    static const ops::TraceHooks trace_hooks{&trace::is_tracing, &trace::record_op};
    ops::install_trace_hooks(&trace_hooks);
    return true;
  }();
  (void)installed;
}

}  // namespace

TraceState* current() {
  return t_current.get();
}

std::shared_ptr<TraceState> nested_in(TraceState& outer) {
  auto state = std::make_shared<TraceState>();
  state->function_name = outer.function_name;
  state->code_function = outer.code_function;
  state->imported_node = outer.imported_node;
  state->body = std::make_shared<graph::Body>();
  state->parent = &outer;
  state->allow_variable_creation = outer.allow_variable_creation;
  return state;
}

bool is_tracing() {
  return t_current != nullptr;
}

ImportedNodeScope::ImportedNodeScope(std::string name) : trace_(t_current.get()) {
  if (trace_) outer_ = std::exchange(trace_->imported_node, std::move(name));
}

ImportedNodeScope::~ImportedNodeScope() {
  if (trace_) trace_->imported_node = std::move(outer_);
}

ActiveTrace::ActiveTrace(std::shared_ptr<TraceState> state, bool finish_on_exit)
    : state_(std::move(state)), previous_(t_current), finish_on_exit_(finish_on_exit) {
  install_hooks();
  t_current = state_;
}

ActiveTrace::~ActiveTrace() {
  if (finish_on_exit_) state_->finished = true;
  t_current = previous_;
}

graph::ValueRef resolve(const Tensor& t) {
  TraceState* state = current();
  const auto& impl = *t.impl();
  if (!impl.trace) {
    auto [it, inserted] = state->constants.try_emplace(t.id());
    if (inserted) {
      graph::Node node;
      node.kind = graph::NodeKind::Const;
      node.name = state->body->unique_name("Const");
      node.outputs = {{impl.dtype, impl.shape}};
      node.value = t;
      it->second = {state->body->add(std::move(node)), 0};
    }
    return it->second;
  }
  if (impl.trace.get() == state) return {impl.node, impl.output};
  if (impl.trace->finished || !is_ancestor(impl.trace.get(), state)) throw_leak(impl);
  // A value of an enclosing body: capture it through a placeholder, in every
  // body between here and there.
  auto key = std::make_tuple(impl.trace.get(), impl.node, impl.output);
  auto it = state->capture_index.find(key);
  if (it != state->capture_index.end()) return it->second;
  Tensor outer = t;
  graph::ValueRef placeholder = resolve(add_placeholder("capture", {impl.dtype, impl.shape}));
  state->captures.push_back({outer, placeholder});
  state->capture_index[key] = placeholder;
  return placeholder;
}

Tensor add_placeholder(const std::string& name, const ops::ValueType& type) {
  TraceState* state = current();
  graph::Node node;
  node.kind = graph::NodeKind::Placeholder;
  node.name = state->body->unique_name(name);
  node.outputs = {type};
  int32_t index = state->body->add(std::move(node));
  state->body->placeholders.push_back(index);
  return detail::make_symbolic(t_current, index, 0, type.dtype, type.shape);
}

namespace {
// Adds `node` to the current body, named after its op unless it has a name;
// an op of an imported model node is "node/op" (as in a tf.name_scope).
int32_t append(TraceState& state, graph::Node&& node) {
  if (!state.imported_node.empty()) {
    if (node.name.empty())
      node.name = state.body->unique_name(state.imported_node + "/" + node.op_name());
    node.site = CallSite();
  }
  if (node.name.empty()) node.name = state.body->unique_name(node.op_name());
  node.function = state.code_function;
  return state.body->add(std::move(node));
}

Tensor output_tensor(TraceState& state, int32_t index, int32_t output) {
  const ops::ValueType& type = state.body->nodes[size_t(index)].outputs[size_t(output)];
  return detail::make_symbolic(t_current, index, output, type.dtype, type.shape);
}
}  // namespace

std::vector<Tensor> add_node(graph::Node node) {
  TraceState& state = *current();
  int32_t index = append(state, std::move(node));
  const size_t count = state.body->nodes[size_t(index)].outputs.size();
  std::vector<Tensor> outputs;
  outputs.reserve(count);
  for (size_t i = 0; i < count; ++i) outputs.push_back(output_tensor(state, index, int32_t(i)));
  return outputs;
}

Tensor record_op(ops::OpId op, std::span<const Tensor> inputs, const ops::Attrs& attrs,
                 CallSite site) {
  if (!is_tracing()) {
    // A symbolic input outside any trace: it leaked.
    for (const Tensor& t : inputs) {
      if (t.is_symbolic()) throw_leak(*t.impl());
    }
  }
  const ops::OpDef& def = ops::op_def(op);
  graph::Node node;
  node.kind = graph::NodeKind::Op;
  node.op = op;
  node.attrs = attrs;
  node.site = site;
  // The shape rule's inputs: inline for the usual arities, so that recording
  // an op allocates only what the node keeps.
  constexpr size_t kInline = 4;
  const size_t n = inputs.size();
  std::array<ops::ValueType, kInline> types_inline;
  std::array<const void*, kInline> values_inline;
  std::vector<ops::ValueType> types_heap;
  std::vector<const void*> values_heap;
  if (n > kInline) {
    types_heap.resize(n);
    values_heap.resize(n);
  }
  ops::ValueType* types = n > kInline ? types_heap.data() : types_inline.data();
  const void** values = n > kInline ? values_heap.data() : values_inline.data();
  node.inputs.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined()) {
      throw InvalidArgumentError(std::string(def.name) + ": an input is an undefined tensor");
    }
    node.inputs.push_back(resolve(t));
    types[i] = {t.dtype(), t.shape()};
    values[i] = t.is_symbolic() ? nullptr : t.raw_data();
  }
  ops::InferContext ctx{def.name, {types, n}, attrs, {values, n}};
  node.outputs = {def.infer(ctx)};
  TraceState& state = *current();
  return output_tensor(state, append(state, std::move(node)), 0);
}

std::string symbolic_name(const detail::TensorImpl& impl) {
  const graph::Node& node = impl.trace->body->nodes[size_t(impl.node)];
  return node.name + ":" + std::to_string(impl.output);
}

namespace {

// What to do instead of reading a value while tracing. The code may be what
// agc wrote, so the advice names what agc stages rather than "run agc".
std::string_view value_access_remedy(std::string_view what) {
  if (what == "converted to bool") {
    return "agc stages the conditions of if, while, for and ?:, and the operands of &&, || and "
           "!, in the functions it converts (marked AG_FUNCTION, and what they call in the same "
           "file); any other conversion to bool is C++ that runs once, while tracing: keep the "
           "tensor and use ag::where, ag::cond or ag::while_loop";
  }
  if (what == "iterated over with a C++ for loop") {
    return "iterate over it in a function agc converts (for (auto row : t) is staged there), or "
           "use ag::while_loop";
  }
  return "keep it a tensor and compute with ag ops, or read the value after the function "
         "returns";
}

}  // namespace

void throw_value_access(const detail::TensorImpl& impl, std::string_view what) {
  if (impl.trace->finished) throw_leak(impl);
  throw FailedPreconditionError(describe(impl) + " cannot be " + std::string(what) +
                                " while tracing function '" + impl.trace->function_name +
                                "': its value is only known when the graph runs; " +
                                std::string(value_access_remedy(what)) + ".");
}

}  // namespace ag::trace
