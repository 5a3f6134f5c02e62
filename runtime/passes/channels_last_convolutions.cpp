// Channels-first convolutions and pools run channels last, and so do the
// elementwise ops between them. oneDNN's fast convolutions read and write
// channels last; a channels-first one (ONNX's Conv, as every model exported
// from PyTorch has it) reorders its image in and its result out, two full
// passes per convolution: half of mobilenet_v2's time. Here each value of
// the region keeps a channels-last twin, so that a chain
//   conv -> add bias -> clip -> conv -> ...
// runs channels last from its first convolution's input to where a value is
// read channels first again, with one transpose at each end. An ONNX model of
// a channels-last graph (ag::onnx::save of a traced conv2d, a TensorFlow
// export) spells each convolution transpose(x, NHWC -> NCHW) -> Conv ->
// transpose(NCHW -> NHWC); both transposes go.
//
// Needs: a valid body.
// Guarantees: one pass over the nodes in order, each value v of rank n
// (3 to 5) given at most one twin, v transposed channels last
// (p = [0, 2, ..., n-1, 1]):
//   - transpose(x, p^-1) has the twin x;
//   - a Conv, MaxPool or AvgPool with channels-first attrs reads its input's
//     twin (a new transpose when it has none) and becomes channels last; its
//     result is its twin, and a new transpose(result, p^-1) stands for the
//     channels-first value;
//   - an elementwise op one of whose inputs has a twin reads the twins of its
//     inputs (a new transpose for a rank-n input without one; a lower-rank
//     input of a known shape, a broadcast bias, reshaped to rank n and
//     transposed; rank 0 as it is) and becomes channels last the same way;
//   - a new transpose that moves only dims of size 1 is a reshape;
//   - transpose(v, p) of a v with a twin becomes an Identity of the twin;
//   - an Identity of a value with a twin has that twin too.
// A node that body.outputs names, or that reads or makes a storage dtype
// (dtype.h), keeps its layout. Values are unchanged: the
// convolutions and pools sum the same products in either layout, and an
// elementwise op computes each element from the same operands. The
// transposes nothing reads are left for dead-code elimination.

#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ops/conv_geometry.h"
#include "passes/passes.h"

namespace ag::passes {
namespace {

using graph::Body;
using graph::Node;
using graph::NodeKind;
using graph::ValueRef;
using ops::OpId;
using ops::ValueType;

// [0, 2, ..., n-1, 1]: channels first to channels last.
std::vector<int64_t> to_last(int rank) {
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin() + 1, perm.end() - 1, 2);
  perm.back() = 1;
  return perm;
}

// [0, n-1, 1, ..., n-2]: channels last to channels first.
std::vector<int64_t> to_first(int rank) {
  std::vector<int64_t> perm = {0, rank - 1};
  for (int64_t i = 1; i + 1 < rank; ++i) perm.push_back(i);
  return perm;
}

bool twin_rank(int rank) {
  return rank >= 3 && rank <= 5;
}

Shape permuted(const Shape& shape, const std::vector<int64_t>& perm) {
  std::vector<int64_t> dims;
  for (int64_t axis : perm) dims.push_back(shape[int(axis)]);
  return Shape(dims);
}

bool is_pool_or_conv(const Node& n) {
  return n.is_op(OpId::Conv) || n.is_op(OpId::MaxPool) || n.is_op(OpId::AvgPool);
}

class Rewriter {
 public:
  explicit Rewriter(Body& body) : body_(body), first_(body.nodes.size()) {
    for (ValueRef v : body.outputs) named_by_outputs_.insert({v.node, true});
  }

  void run() {
    for (size_t i = 0; i < body_.nodes.size(); ++i) rewrite(int32_t(i));
    finish();
  }

 private:
  void rewrite(int32_t i) {
    const Node& n = body_.nodes[size_t(i)];
    const bool fixed = named_by_outputs_.count(i) > 0 || !computes_on_its_dtypes(n);
    if (!fixed && n.kind == NodeKind::Op && n.outputs.size() == 1) {
      if (is_pool_or_conv(n) && ops::ConvAttrs::decode(n.attrs).channels_first)
        return convert(i, /*pool_or_conv=*/true);
      if ((ops::op_def(n.op).flags & ops::kElementwise) && convertible_elementwise(n))
        return convert(i, /*pool_or_conv=*/false);
      if (n.is_op(OpId::Transpose) && rewrite_transpose(i)) return;
    }
    copy(i);
    if (n.is_op(OpId::Identity) && twin_of(n.inputs[0])) twins_[{i, 0}] = *twin_of(n.inputs[0]);
  }

  // Whether a node's values are all of dtypes the kernels compute on: the
  // transposes this pass adds run no cast for a storage dtype (float16,
  // uint8, ...), which ops::apply would have wrapped around them.
  bool computes_on_its_dtypes(const Node& n) const {
    for (ValueRef in : n.inputs)
      if (!is_compute_dtype(body_.type_of(in).dtype)) return false;
    for (const ValueType& out : n.outputs)
      if (!is_compute_dtype(out.dtype)) return false;
    return true;
  }

  // An elementwise op converts when an input has a twin and every input can
  // have one: rank n, rank 0, or a lower rank of a known shape.
  bool convertible_elementwise(const Node& n) const {
    const int rank = n.outputs[0].shape.rank();
    if (!twin_rank(rank)) return false;
    bool any_twin = false;
    for (ValueRef in : n.inputs) {
      const Shape& s = body_.type_of(in).shape;
      any_twin = any_twin || (s.rank() == rank && twin_of(in));
      if (s.rank() != rank && s.rank() != 0 && !s.is_fully_defined()) return false;
    }
    return any_twin;
  }

  // The node reads its inputs' twins and computes its own twin; a new
  // transpose back stands for its channels-first value.
  void convert(int32_t i, bool pool_or_conv) {
    Node n = body_.nodes[size_t(i)];
    const int rank = n.outputs[0].shape.rank();
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const bool image = !pool_or_conv || k == 0;  // a filter keeps its layout
      n.inputs[k] = image ? twin_or_transposed(n.inputs[k], rank, n.site) : first(n.inputs[k]);
    }
    if (pool_or_conv) {
      ops::ConvAttrs attrs = ops::ConvAttrs::decode(n.attrs);
      attrs.channels_first = false;
      n.attrs = attrs.encode();
    }
    n.outputs[0].shape = permuted(n.outputs[0].shape, to_last(rank));
    const CallSite site = n.site;
    const ValueRef twin = emit(std::move(n));
    twins_[{i, 0}] = twin;
    first_[size_t(i)] = {transpose(twin, to_first(rank), site)};
  }

  // transpose(x, p^-1) records x as its twin; transpose(v, p) of a v with a
  // twin becomes an Identity of it.
  bool rewrite_transpose(int32_t i) {
    const Node& n = body_.nodes[size_t(i)];
    const int rank = n.outputs[0].shape.rank();
    if (!twin_rank(rank)) return false;
    const std::vector<int64_t> perm = graph::transpose_permutation(n);
    if (perm == to_last(rank) && twin_of(n.inputs[0])) {
      Node identity = n;
      identity.op = OpId::Identity;
      identity.attrs = {};
      identity.inputs = {*twin_of(n.inputs[0])};
      first_[size_t(i)] = {emit(std::move(identity))};
      return true;
    }
    if (perm == to_first(rank)) {
      copy(i);
      twins_[{i, 0}] = first(n.inputs[0]);
      return true;
    }
    return false;
  }

  // The channels-last twin of an input of a rank-`rank` op: its twin, rank 0
  // as it is, or a new transpose (after a reshape to rank `rank`, for a
  // broadcast operand).
  ValueRef twin_or_transposed(ValueRef old, int rank, CallSite site) {
    if (auto twin = twin_of(old)) return *twin;
    const ValueType& type = body_.type_of(old);
    if (type.shape.rank() == 0) return first(old);
    ValueRef v = first(old);
    if (type.shape.rank() != rank) {
      std::vector<int64_t> dims(size_t(rank - type.shape.rank()), 1);
      for (int d = 0; d < type.shape.rank(); ++d) dims.push_back(type.shape[d]);
      ops::Attrs attrs;
      attrs.ints = dims;
      v = emit(op_node(OpId::Reshape, "reshape", {v}, attrs, {type.dtype, Shape(dims)}, site));
    }
    const ValueRef twin = transpose(v, to_last(rank), site);
    if (type.shape.rank() == rank) twins_[{old.node, old.output}] = twin;
    return twin;
  }

  std::optional<ValueRef> twin_of(ValueRef old) const {
    auto it = twins_.find({old.node, old.output});
    if (it == twins_.end()) return std::nullopt;
    return it->second;
  }

  ValueRef first(ValueRef old) const { return first_[size_t(old.node)][size_t(old.output)]; }

  // transpose(v, perm); a reshape where perm moves only dims of size 1 (a
  // bias [1, C, 1, 1] to [1, 1, 1, C]), which keeps the elements' order.
  ValueRef transpose(ValueRef v, const std::vector<int64_t>& perm, CallSite site) {
    const ValueType type = out_[size_t(v.node)].outputs[size_t(v.output)];
    const Shape shape = permuted(type.shape, perm);
    ops::Attrs attrs;
    if (moves_only_unit_dims(type.shape, perm)) {
      for (int d = 0; d < shape.rank(); ++d) attrs.ints.push_back(shape[d]);
      return emit(op_node(OpId::Reshape, "reshape", {v}, attrs, {type.dtype, shape}, site));
    }
    attrs.ints = perm;
    return emit(op_node(OpId::Transpose, "transpose", {v}, attrs, {type.dtype, shape}, site));
  }

  static bool moves_only_unit_dims(const Shape& shape, const std::vector<int64_t>& perm) {
    if (!shape.is_fully_defined()) return false;
    int64_t previous = -1;
    for (int64_t axis : perm) {
      if (shape[int(axis)] == 1) continue;
      if (axis < previous) return false;
      previous = axis;
    }
    return true;
  }

  Node op_node(OpId op, const std::string& base, std::vector<ValueRef> inputs,
               const ops::Attrs& attrs, ValueType type, CallSite site) {
    Node n;
    n.op = op;
    n.name = body_.unique_name(base);
    n.inputs.assign(inputs.begin(), inputs.end());
    n.attrs = attrs;
    n.outputs = {std::move(type)};
    n.site = site;
    return n;
  }

  void copy(int32_t i) {
    Node n = body_.nodes[size_t(i)];
    for (ValueRef& in : n.inputs) in = first(in);
    const size_t outputs = n.outputs.size();
    const ValueRef v = emit(std::move(n));
    for (size_t k = 0; k < outputs; ++k) first_[size_t(i)].push_back({v.node, int32_t(k)});
    if (body_.nodes[size_t(i)].kind == NodeKind::Placeholder) placeholders_[i] = v.node;
  }

  ValueRef emit(Node n) {
    out_.push_back(std::move(n));
    return {int32_t(out_.size() - 1), 0};
  }

  void finish() {
    for (int32_t& p : body_.placeholders) p = placeholders_.at(p);
    for (ValueRef& v : body_.outputs) v = first(v);
    body_.nodes = std::move(out_);
  }

  Body& body_;
  std::vector<Node> out_;
  std::vector<std::vector<ValueRef>> first_;  // by old node and output: the value, as it was
  std::map<std::pair<int32_t, int32_t>, ValueRef> twins_;  // old value -> its channels-last twin
  std::map<int32_t, bool> named_by_outputs_;
  std::map<int32_t, int32_t> placeholders_;  // old index -> new index
};

// Twins start at a channels-first convolution or pool, or at a transpose to
// channels first; a body with neither (most bodies) is left as it is,
// without copying its nodes.
bool has_twin_source(const Body& body) {
  for (const Node& n : body.nodes) {
    if (n.kind != NodeKind::Op) continue;
    if (is_pool_or_conv(n) && ops::ConvAttrs::decode(n.attrs).channels_first) return true;
    const int rank = n.outputs.empty() ? 0 : n.outputs[0].shape.rank();
    if (n.is_op(OpId::Transpose) && twin_rank(rank) &&
        graph::transpose_permutation(n) == to_first(rank))
      return true;
  }
  return false;
}

}  // namespace

void run_convolutions_channels_last(Body& body) {
  if (has_twin_source(body)) Rewriter(body).run();
}

}  // namespace ag::passes
