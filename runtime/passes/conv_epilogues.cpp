// A convolution and the elementwise ops that finish its result become one
// fused_conv: oneDNN adds the bias in its kernel and the residual and the
// activation as post-ops, on the result while it is in cache, where each op
// of the chain
//   conv -> add bias -> add residual -> relu or clip
// was a pass over the whole result of its own (a third of mobilenet_v2's
// time went to such passes). TensorFlow's Grappler remapper makes
// _FusedConv2D from the same chains.
//
// Needs: a valid body.
// Guarantees: one pass over the nodes in order. Each conv(x, w) of static
// shapes whose result only one node reads starts a chain, which takes each
// of these in turn while the node before it has that one reader (and is not
// an output):
//   - add(v, b) or add(b, v), b one value per output channel along the
//     channel axis (ops::is_channel_bias): a constant, or a variable's value
//     in a training step;
//   - add(v, r) or add(r, v), r any other value of v's dtype and shape;
//   - relu(v), or minimum(maximum(v, lo), hi) (ONNX's Clip as imported) of
//     finite float constants lo < hi, neither -0.
// A chain of at least one of them becomes fused_conv(x, w, [b], [r]) in
// place of its last node, which keeps its name; the conv and the adds before
// it are left, unused, for dead-code elimination. Values are unchanged: a
// chain is fused only where the kernel adds the terms to the finished sum of
// products, each on the float the unfused op would get
// (ops::fused_conv_keeps_values: oneDNN's brgemm kernels, and the im2col
// engine; oneDNN's older direct kernels start the sum from the bias).
// oneDNN's clip computes minimum(maximum(v, lo), hi) bit for bit, NaN to lo
// included (checked on NaN, +-0, +-inf and subnormals), but for a bound of
// -0; clip_by_value, which keeps a NaN, is not fused.

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "ops/conv_geometry.h"
#include "ops/conv_kernels.h"
#include "passes/passes.h"

namespace ag::passes {
namespace {

using graph::Body;
using graph::Node;
using graph::ValueRef;
using ops::ConvEpilogue;
using ops::OpId;

// Per node: how many inputs and body outputs read it.
std::vector<int32_t> count_readers(const Body& body) {
  std::vector<int32_t> readers(body.nodes.size(), 0);
  for (const Node& node : body.nodes)
    for (ValueRef in : node.inputs) ++readers[size_t(in.node)];
  for (ValueRef out : body.outputs) ++readers[size_t(out.node)];
  return readers;
}

// Per node: the one node that reads it, where one does.
std::vector<int32_t> sole_readers(const Body& body, const std::vector<int32_t>& readers) {
  std::vector<int32_t> sole(body.nodes.size(), -1);
  for (size_t i = 0; i < body.nodes.size(); ++i)
    for (ValueRef in : body.nodes[i].inputs)
      if (readers[size_t(in.node)] == 1) sole[size_t(in.node)] = int32_t(i);
  return sole;
}

// A chain being matched: its last node, the fused op's inputs and epilogue.
struct Chain {
  int32_t last;
  std::vector<ValueRef> inputs;
  ConvEpilogue epilogue;
};

// The operand of add node `add` other than `v`, where `v` is exactly one of them.
std::optional<ValueRef> other_operand(const Node& add, int32_t v) {
  const ValueRef a = add.inputs[0], b = add.inputs[1];
  if ((a.node == v) == (b.node == v)) return std::nullopt;
  return a.node == v ? b : a;
}

class ConvEpilogues {
 public:
  explicit ConvEpilogues(Body& body)
      : body_(body), readers_(count_readers(body)), sole_(sole_readers(body, readers_)) {}

  void run() {
    for (size_t i = 0; i < body_.nodes.size(); ++i)
      if (body_.nodes[i].is_op(OpId::Conv)) fuse_from(int32_t(i));
  }

 private:
  // The node that alone reads `node`'s result, if it is an op `op`.
  const Node* next_of(int32_t node, OpId op) const {
    const int32_t next = sole_[size_t(node)];
    if (next < 0 || !body_.nodes[size_t(next)].is_op(op)) return nullptr;
    return &body_.nodes[size_t(next)];
  }

  void fuse_from(int32_t conv) {
    const Node& node = body_.nodes[size_t(conv)];
    // (Whether a kernel keeps the values is asked of the kernel of a shape.)
    for (ValueRef in : node.inputs)
      if (!body_.type_of(in).shape.is_fully_defined()) return;
    const ops::ConvAttrs attrs = ops::ConvAttrs::decode(node.attrs);
    const ops::ConvGeometry g = ops::conv_geometry(
        node.name, attrs, body_.type_of(node.inputs[0]).shape, body_.type_of(node.inputs[1]).shape);
    Chain chain{conv, {node.inputs[0], node.inputs[1]}, {}};
    take_bias(chain, g);
    take_residual(chain);
    take_activation(chain);
    if (chain.last == conv ||
        !ops::fused_conv_keeps_values(node.outputs[0].dtype, g, chain.epilogue))
      return;
    rewrite(chain, ops::FusedConvAttrs{attrs, chain.epilogue}, node.site);
  }

  void take_bias(Chain& chain, const ops::ConvGeometry& g) {
    const Node* add = next_of(chain.last, OpId::Add);
    if (!add) return;
    const std::optional<ValueRef> bias = other_operand(*add, chain.last);
    if (!bias) return;
    const ops::ValueType& out = body_.nodes[size_t(chain.last)].outputs[0];
    if (body_.type_of(*bias).dtype != out.dtype ||
        !ops::is_channel_bias(body_.type_of(*bias).shape, g, out.shape))
      return;
    chain.inputs.push_back(*bias);
    chain.epilogue.bias = true;
    chain.last = sole_[size_t(chain.last)];
  }

  void take_residual(Chain& chain) {
    const Node* add = next_of(chain.last, OpId::Add);
    if (!add) return;
    const std::optional<ValueRef> residual = other_operand(*add, chain.last);
    const ops::ValueType& out = body_.nodes[size_t(chain.last)].outputs[0];
    if (!residual || body_.type_of(*residual).dtype != out.dtype ||
        body_.type_of(*residual).shape != out.shape)
      return;
    chain.inputs.push_back(*residual);
    chain.epilogue.residual = true;
    chain.last = sole_[size_t(chain.last)];
  }

  void take_activation(Chain& chain) {
    if (next_of(chain.last, OpId::Relu)) {
      chain.epilogue.activation = ConvEpilogue::Activation::relu;
      chain.last = sole_[size_t(chain.last)];
      return;
    }
    const Node* maximum = next_of(chain.last, OpId::Maximum);
    if (!maximum || maximum->inputs[0].node != chain.last) return;
    const int32_t lowered = sole_[size_t(chain.last)];
    const Node* minimum = next_of(lowered, OpId::Minimum);
    if (!minimum || minimum->inputs[0].node != lowered) return;
    const DType dtype = body_.nodes[size_t(chain.last)].outputs[0].dtype;
    const std::optional<double> lo = clip_bound(maximum->inputs[1], dtype);
    const std::optional<double> hi = clip_bound(minimum->inputs[1], dtype);
    if (!lo || !hi || !(*lo < *hi)) return;
    chain.epilogue.activation = ConvEpilogue::Activation::clip;
    chain.epilogue.lo = *lo;
    chain.epilogue.hi = *hi;
    chain.last = sole_[size_t(lowered)];
  }

  // The value of a finite float scalar Const that is not -0 (oneDNN's clip
  // gives +0 where maximum and minimum would give a -0 bound).
  std::optional<double> clip_bound(ValueRef v, DType dtype) const {
    const Node& node = body_.nodes[size_t(v.node)];
    if (node.kind != graph::NodeKind::Const || node.value.rank() != 0 ||
        node.value.dtype() != dtype)
      return std::nullopt;
    const double value = node.value.dtype() == float32 ? double(node.value.item<float>())
                                                       : node.value.item<double>();
    if (!std::isfinite(value) || (value == 0.0 && std::signbit(value))) return std::nullopt;
    return value;
  }

  // The chain's last node computes the whole chain; its name and type stay.
  void rewrite(const Chain& chain, const ops::FusedConvAttrs& attrs, CallSite conv_site) {
    Node& last = body_.nodes[size_t(chain.last)];
    last.op = OpId::FusedConv;
    last.inputs.clear();
    for (ValueRef in : chain.inputs) last.inputs.push_back(in);
    last.attrs = attrs.encode();
    last.site = conv_site;
  }

  Body& body_;
  std::vector<int32_t> readers_;
  std::vector<int32_t> sole_;
};

}  // namespace

void fuse_conv_epilogues(Body& body) {
  ConvEpilogues(body).run();
}

}  // namespace ag::passes
