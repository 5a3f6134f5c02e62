// Constant folding: an op whose inputs are all constants is computed once,
// at optimisation time, by the same kernel eager mode and the executor use
// (ops::run_eager), so no arithmetic is written twice. An op that reads only
// its inputs' shapes (shape, size, rank, dim: ops::kShapeOnly) needs only
// their types, so it folds whenever those shapes are static.
//
// Needs: a valid body whose declared types hold at run time.
// Guarantees: each non-stateful Op node whose inputs are all Const nodes, or
// a kShapeOnly node whose inputs have fully defined shapes, becomes a Const
// node with the same name and index holding its value, unless
// - running it raises an ag::Error: the error belongs to run time, and
//   non-strict execution may never run the node;
// - its result has more than kMaxFoldedElements elements: a huge constant
//   costs more memory than computing the value on each call. A transpose of
//   a constant that nothing else reads still folds (the constant it replaces
//   dies: no memory is added), so a large array laid out transposed
//   (transposed_arrays.cpp) does not transpose its zeros on every call;
//   so does a node whose value is its input's bytes (below);
// - the result's type does not fit the node's declared type (the node is
//   left for run time rather than changing the types its users saw).
// A reshape, expand_dims or squeeze of a constant, and a transpose of a
// constant whose elements are all the same bits (the zeros a TensorArray
// starts from), is its input's bytes under its own shape: the folded
// constant shares the input's storage, so that the optimised graph and the
// trace it was copied from hold those bytes once.
// A zeros or broadcast_to op (or a dynamic_broadcast_to or dynamic_tile,
// whose size was unknown while tracing) folds only up to kMaxFoldedFill elements:
// larger, it stays an op, which costs no memory in the graph (and a zeros op
// nothing at run time where a loop overwrites it before reading it,
// exec/plan_compile.cpp). A reshape,
// expand_dims, squeeze or transpose of a zeros op becomes a zeros op of its
// own shape (transposed_arrays.cpp lays out a loop's zeros so).
// A folded node's shape may become more specific (e.g. a `range` whose length
// was unknown while tracing). One forward sweep folds whole constant chains.
// The folded node's former inputs may become dead.

#include <cstring>
#include <vector>

#include "core/tensor_impl.h"
#include "ops/dispatch.h"
#include "passes/passes.h"

namespace ag::passes {
namespace {

constexpr int64_t kMaxFoldedElements = int64_t{1} << 20;
// As TensorFlow's tf.zeros and tf.fill, which are constants up to 1,000
// elements.
constexpr int64_t kMaxFoldedFill = 1024;

bool all_inputs_constant(const graph::Body& body, const graph::Node& node) {
  for (graph::ValueRef in : node.inputs) {
    if (body.nodes[size_t(in.node)].kind != graph::NodeKind::Const) return false;
  }
  return true;
}

bool shapes_static(const graph::Body& body, const graph::Node& node) {
  if (!(ops::op_def(node.op).flags & ops::kShapeOnly)) return false;
  for (graph::ValueRef in : node.inputs) {
    if (!body.type_of(in).shape.is_fully_defined()) return false;
  }
  return true;
}

bool too_large(const Shape& shape) {
  return shape.is_fully_defined() && shape.num_elements() > kMaxFoldedElements;
}

// A transpose of a constant only it reads: folding it swaps one constant for
// another of the same size.
bool replaces_its_input(const graph::Body& body, const graph::Node& node) {
  return node.op == ops::OpId::Transpose && graph::count_reads(body, node.inputs[0].node) == 1;
}

bool all_elements_equal(const Tensor& t) {
  const size_t element = dtype_size(t.dtype());
  const size_t bytes = size_t(t.num_elements()) * element;
  const auto* data = static_cast<const unsigned char*>(t.raw_data());
  // Equal to itself shifted by one element: every element equals the first.
  return bytes <= element || std::memcmp(data, data + element, bytes - element) == 0;
}

// Ops that only move their input's elements: of all-equal elements, the
// result is the same elements under the op's shape.
bool moves_elements(ops::OpId op) {
  return op == ops::OpId::Reshape || op == ops::OpId::ExpandDims || op == ops::OpId::Squeeze ||
         op == ops::OpId::Transpose;
}

bool keeps_the_bytes(const graph::Node& node, const Tensor& input) {
  return moves_elements(node.op) && (node.op != ops::OpId::Transpose || all_elements_equal(input));
}

// The ops that fold only up to kMaxFoldedFill elements: those that repeat
// an input's elements (a dynamic one's size, unknown while tracing, may be
// any).
bool repeats_elements(const graph::Node& node) {
  return node.is_op(ops::OpId::Zeros) || node.is_op(ops::OpId::BroadcastTo) ||
         node.is_op(ops::OpId::DynamicBroadcastTo) || node.is_op(ops::OpId::DynamicTile);
}

bool moves_zeros(const graph::Body& body, const graph::Node& node) {
  return moves_elements(node.op) &&
         body.nodes[size_t(node.inputs[0].node)].is_op(ops::OpId::Zeros) &&
         node.outputs[0].shape.is_fully_defined();
}

}  // namespace

void fold_constants(graph::Body& body) {
  std::vector<Tensor> inputs;
  std::vector<ops::ValueType> types;
  for (graph::Node& node : body.nodes) {
    if (node.kind != graph::NodeKind::Op || node.is_stateful()) continue;
    if (moves_zeros(body, node)) {
      const Shape& shape = node.outputs[0].shape;
      node.op = ops::OpId::Zeros;
      node.inputs.clear();
      node.attrs = {};
      node.attrs.ints.assign(shape.begin(), shape.end());
      node.attrs.dtype = node.outputs[0].dtype;
    }
    if (repeats_elements(node) && !(node.outputs[0].shape.is_fully_defined() &&
                                    node.outputs[0].shape.num_elements() <= kMaxFoldedFill))
      continue;
    const bool constant = all_inputs_constant(body, node);
    if (!constant && !shapes_static(body, node)) continue;
    const ops::ValueType& declared = node.outputs[0];
    const Tensor* first = constant && node.inputs.size() == 1
                              ? &body.nodes[size_t(node.inputs[0].node)].value
                              : nullptr;
    const bool shares_bytes = first && declared.shape.is_fully_defined() &&
                              declared.dtype == first->dtype() && keeps_the_bytes(node, *first);
    // (replaces_its_input walks the body: asked only of the rare huge node.)
    const bool huge = too_large(declared.shape);
    const bool any_size = huge && constant && (shares_bytes || replaces_its_input(body, node));
    if (huge && !any_size) continue;
    Tensor result;
    try {
      if (shares_bytes) {
        result = detail::with_shape(*first, declared.shape);
      } else if (constant) {
        inputs.clear();
        for (graph::ValueRef in : node.inputs) inputs.push_back(body.nodes[size_t(in.node)].value);
        result = ops::run_eager(node.op, inputs, node.attrs, nullptr);
      } else {
        types.clear();
        for (graph::ValueRef in : node.inputs) types.push_back(body.type_of(in));
        result = ops::run_on_shapes(node.op, types, node.attrs);
      }
    } catch (const Error&) {
      continue;
    }
    if ((!any_size && too_large(result.shape())) || result.dtype() != declared.dtype ||
        !result.shape().is_subtype_of(declared.shape)) {
      continue;
    }
    node.kind = graph::NodeKind::Const;
    node.op = ops::OpId::kCount;
    node.inputs.clear();
    node.attrs = {};
    node.outputs[0] = {result.dtype(), result.shape()};
    node.value = std::move(result);
  }
}

}  // namespace ag::passes
