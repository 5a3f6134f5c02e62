// ONNX models as callables on our executor, without the source and without agc.
//
//   ag::onnx::Model model = ag::onnx::load("model.onnx");
//   std::vector<ag::Tensor> out = model({ag::constant({{1.0f, 2.0f}})});
//
// Loading traces the model's graph once, through the same public ops a traced
// C++ function calls, so it runs on the same plan, passes and kernels. ONNX's
// semantics are kept exactly (broadcasting, negative axes, keepdims, integer
// Div truncation, Mod's fmod, ...); an op, attribute or dtype we cannot map
// is an UnimplementedError naming the op type and the node.
// Link with autograph_cpp::ag_onnx.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ag/function.h"
#include "ag/tensor.h"

namespace ag::onnx {

class Model {
 public:
  // Runs the model. `inputs` are the graph inputs that are not initializers,
  // in the model's order; each must match its spec (dtype, rank, known dims).
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;

  const std::vector<std::string>& input_names() const;
  // Symbolic dims (dim_param) and missing dims are unknown (None).
  const std::vector<TensorSpec>& input_specs() const;
  const std::vector<std::string>& output_names() const;
  // The graph as traced, before optimisation.
  Graph graph() const;
  // The graph that runs, after the optimisation passes (fused nodes and all),
  // and what the executor compiled it into (ConcreteFunction's namesakes).
  Graph optimized_graph() const;
  PlanStats plan_stats() const;
  // "model(x: TensorSpec(shape=(None, 3), dtype=float32)) -> (y)".
  std::string signature() const;
  // The opset of the default ONNX domain the model imports.
  int64_t opset() const;

  struct Impl;
  explicit Model(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const Impl> impl_;
};

struct SaveOptions {
  // The name of the ONNX graph.
  std::string graph_name = "ag_graph";
};

// Writes a traced graph as an ONNX model of opset 17 (the newest that
// Debian's ONNX 1.12 checks fully), valid under onnx::checker with full shape
// inference. Inputs are named after the function's arguments, unknown dims
// are symbolic (`x_dim0`), constants and the ag::Variables the function reads
// are initializers holding their values now. If and While become If and
// Loop; a TensorArray is an ONNX sequence (SequenceInsert, SequenceAt, ConcatFromSequence). An
// op with no ONNX form, a variable update, ag::print and ag::host_function are
// UnimplementedErrors naming the node; an ag::assert_that is left out with a warning on stderr.
void save(const Graph& graph, const std::string& path, const SaveOptions& options = {});
std::string save_to_bytes(const Graph& graph, const SaveOptions& options = {});
template <class R>
void save(const ConcreteFunction<R>& f, const std::string& path, const SaveOptions& options = {}) {
  save(f.graph(), path, options);
}
// Without agc: traces `f` for `specs` (TensorSpecs or example tensors) first.
template <class F, class... Specs>
void save(const PolymorphicFunction<F>& f, const std::string& path, const Specs&... specs) {
  save(f.get_concrete_function(specs...), path);
}

// Reads and traces a model file. Errors: a file that is not an ONNX model, an
// opset above 17 or below 1, and what the op mapping cannot express.
Model load(const std::string& path);
// The same from the serialized bytes of a ModelProto; `name` is used in messages.
Model load_from_bytes(const std::string& bytes, const std::string& name = "model");

}  // namespace ag::onnx
