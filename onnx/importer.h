// Importing an ONNX graph: the graph's nodes run, in order, as calls of our
// public ops while ag::onnx::load traces them (so they record graph nodes),
// or eagerly where every input is known at load time (initializers,
// constants, static shapes), which folds them away.
//
// One importer function per ONNX op type, listed once in onnx/ops.def and
// defined in the import_*.cpp file of its family. An importer reads its node
// through a NodeContext and returns the node's outputs.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ag/error.h"
#include "ag/onnx.h"
#include "ag/tensor.h"
#include "ag/variable.h"

namespace ag::onnx_io {

// The values visible to a graph: its own, then its enclosing graphs' (ONNX
// subgraphs of If and Loop read outer values by name).
class Scope {
 public:
  explicit Scope(const Scope* outer = nullptr) : outer_(outer) {}
  void bind(const std::string& name, Tensor value) { values_[name] = std::move(value); }
  // Null when no enclosing graph defines `name`.
  const Tensor* find(const std::string& name) const;
  // The node of this graph that computed `name`; null for its inputs and
  // initializers and for the values of enclosing graphs.
  const ::onnx::NodeProto* producer(const std::string& name) const;
  void set_producer(const std::string& name, const ::onnx::NodeProto& node) {
    producers_[name] = &node;
  }

 private:
  const Scope* outer_;
  std::unordered_map<std::string, Tensor> values_;
  std::unordered_map<std::string, const ::onnx::NodeProto*> producers_;
};

// Thrown when an importer needs the value of an input that is only known at
// run time (NodeContext::constant_ints). When that input is a graph input,
// ag::onnx::load traces the model once per value of it, as tf.function does
// for a Python argument; otherwise the message is the error.
struct NeedsValue {
  const void* tensor_id;
  std::string message;
};

class NodeContext {
 public:
  NodeContext(const ::onnx::NodeProto& node, std::vector<Tensor> inputs, int64_t opset,
              const Scope& scope);

  const ::onnx::NodeProto& node() const { return node_; }
  // The opset of the default domain the model imports.
  int64_t opset() const { return opset_; }
  const Scope& scope() const { return scope_; }

  size_t num_inputs() const { return inputs_.size(); }
  // False for an omitted optional input (an empty name, or past the end).
  bool has_input(size_t k) const { return k < inputs_.size() && inputs_[k].defined(); }
  // Input `k`, which must be present.
  const Tensor& input(size_t k) const;
  const std::vector<Tensor>& inputs() const { return inputs_; }
  // The node of this graph that computed input `k`, or null (Scope::producer).
  const ::onnx::NodeProto* producer(size_t k) const;
  // Whether input `k` is computed by a node of this graph when the model
  // runs: not known while tracing, and no graph input that the model could
  // be specialised on (NeedsValue). Shapes of Reshape, Expand, Tile and
  // ConstantOfShape that are, are read when the model runs.
  bool computed_at_run_time(size_t k) const {
    return has_input(k) && inputs_[k].is_symbolic() && producer(k) != nullptr;
  }
  // The values of input `k`, which must be known when the model is traced
  // (an initializer, a Constant, computed from them, or a graph input the
  // model is specialised on): shapes, axes, slice bounds. Throws NeedsValue.
  std::vector<int64_t> constant_ints(size_t k, std::string_view what) const;
  // The same for values of any dtype, as doubles (a bool as 0 or 1): scales,
  // a constant.
  std::vector<double> constant_doubles(size_t k, std::string_view what) const;

  bool has_attr(std::string_view name) const { return find_attr(name) != nullptr; }
  int64_t attr_int(std::string_view name, int64_t fallback) const;
  int64_t attr_int(std::string_view name) const;
  float attr_float(std::string_view name, float fallback) const;
  std::string attr_string(std::string_view name, std::string fallback) const;
  std::vector<int64_t> attr_ints(std::string_view name) const;
  std::vector<float> attr_floats(std::string_view name) const;
  const ::onnx::TensorProto& attr_tensor(std::string_view name) const;
  const ::onnx::GraphProto& attr_graph(std::string_view name) const;

  // An axis attribute or value in [-rank, rank), made non-negative.
  int64_t normalize_axis(int64_t axis, int64_t rank, std::string_view what) const;
  // The static shape of input `k`; each dim must be known.
  const Shape& static_shape(size_t k, std::string_view why) const;

  // An UnimplementedError / InvalidArgumentError naming the op type and node.
  [[noreturn]] void unsupported(const std::string& what) const;
  [[noreturn]] void invalid(const std::string& what) const;
  // "Add node 'add_1'"; nodes without a name are named by their first output.
  std::string where() const;

 private:
  // Input `k`, or NeedsValue when its value is computed at run time.
  const Tensor& known_input(size_t k, std::string_view what) const;
  const ::onnx::AttributeProto* find_attr(std::string_view name) const;
  const ::onnx::AttributeProto& require_attr(std::string_view name, int type) const;

  const ::onnx::NodeProto& node_;
  std::vector<Tensor> inputs_;
  int64_t opset_;
  const Scope& scope_;
};

using ImportFn = std::vector<Tensor> (*)(NodeContext&);

// The importer of an op type of the default domain: its own (onnx/ops.def),
// else the import of the op whose ag/ops.def row maps to it one to one; or null.
ImportFn find_importer(std::string_view op_type);

// Throws `e` again, of the same kind, with `where` in front of its message
// unless the message starts with it already.
[[noreturn]] void rethrow_at(const Error& e, const std::string& where);

// The ag::Variables that stand for initializers, by initializer name: a
// model loaded with them reads the variables on every call (a saved model's
// weights, ag/saved_model.h) instead of folding the initializers' values.
using InitializerVariables = std::map<std::string, Variable>;

// Binds the initializers of `graph` in `scope`: reads of their variables
// where `variables` has them, else their values.
void bind_initializers(const ::onnx::GraphProto& graph, Scope& scope,
                       const InitializerVariables* variables = nullptr);
// Imports `node`, a node of the graph whose values `scope` holds, and binds
// its outputs there.
void run_node(const ::onnx::NodeProto& node, Scope& scope, int64_t opset);

// Runs `graph`: binds its initializers, then `inputs` to its graph inputs
// that are not initializers, in order, then imports each node. Returns the
// graph outputs, in order.
std::vector<Tensor> run_graph(const ::onnx::GraphProto& graph, const std::vector<Tensor>& inputs,
                              const Scope* outer, int64_t opset,
                              const InitializerVariables* variables = nullptr);

// ag::onnx::load of `model`, its initializers named in `variables` read from
// those variables.
onnx::Model load_with_variables(std::shared_ptr<const ::onnx::ModelProto> model,
                                const std::string& name, InitializerVariables variables);

}  // namespace ag::onnx_io
