// Channels-first convolutions between two transposes run channels last.
// An ONNX model made from a channels-last graph (ag::onnx::save of a traced
// conv2d, or a TensorFlow export) spells each convolution as
//   transpose(x, NHWC -> NCHW) -> Conv (NCHW) -> transpose(NCHW -> NHWC),
// since ONNX's Conv is channels first. Loaded as written, the two transposes
// are full passes over the image and the result, and the convolution reorders
// a channels-first image for its blocked kernel. The same convolution of x
// channels last computes the final transpose's value directly (the filter
// is [kernel..., in, out] in both layouts), in the layout the traced
// function's convolution has.
//
// Needs: a valid body.
// Guarantees: a Conv node with channels-first attrs whose input 0 is (past
// Identity) transpose(x, p), p = [0, r+1, 1, ..., r] (channels last to first,
// r spatial dims), and whose output is read only by transposes with the
// inverse permutation [0, 2, ..., r+1, 1], and is not a body output, reads x
// channels last; its output type is that of those transposes, and each of
// them becomes an Identity of it (the input transpose is left for dead-code
// elimination when nothing else reads it). Values are unchanged: the
// convolution sums the same products in both layouts. Nothing else changes.

#include <cstdint>
#include <numeric>
#include <vector>

#include "ops/conv_geometry.h"
#include "passes/passes.h"

namespace ag::passes {
namespace {

using graph::Body;
using graph::Node;
using graph::ValueRef;
using ops::OpId;

// [0, r+1, 1, ..., r]: channels last (NHWC) to channels first (NCHW).
std::vector<int64_t> channels_last_to_first(int spatial_dims) {
  std::vector<int64_t> perm = {0, spatial_dims + 1};
  for (int64_t i = 1; i <= spatial_dims; ++i) perm.push_back(i);
  return perm;
}

// [0, 2, ..., r+1, 1]: channels first back to channels last.
std::vector<int64_t> channels_first_to_last(int spatial_dims) {
  std::vector<int64_t> perm(size_t(spatial_dims) + 2);
  std::iota(perm.begin() + 1, perm.end() - 1, 2);
  perm.back() = 1;
  return perm;
}

bool is_transpose_by(const Node& node, const std::vector<int64_t>& perm) {
  return node.is_op(OpId::Transpose) && graph::transpose_permutation(node) == perm;
}

// The nodes that read `conv`'s output, when every one is a transpose back to
// channels last (reading nothing else) and the output is no body output;
// empty otherwise.
std::vector<int32_t> transposes_back(const Body& body, int32_t conv, int spatial_dims) {
  for (ValueRef out : body.outputs) {
    if (out.node == conv) return {};
  }
  const std::vector<int64_t> back = channels_first_to_last(spatial_dims);
  std::vector<int32_t> readers;
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    const Node& n = body.nodes[i];
    bool reads = false;
    for (ValueRef in : n.inputs) reads = reads || in.node == conv;
    if (!reads) continue;
    if (!is_transpose_by(n, back)) return {};
    readers.push_back(int32_t(i));
  }
  return readers;
}

void run_channels_last(Body& body, int32_t conv) {
  Node& c = body.nodes[size_t(conv)];
  ops::ConvAttrs attrs = ops::ConvAttrs::decode(c.attrs);
  if (!attrs.channels_first) return;
  const Node& input = graph::producer(body, c.inputs[0]);
  if (!is_transpose_by(input, channels_last_to_first(attrs.rank))) return;
  const std::vector<int32_t> readers = transposes_back(body, conv, attrs.rank);
  if (readers.empty()) return;

  attrs.channels_first = false;
  c.attrs = attrs.encode();
  c.inputs[0] = input.inputs[0];
  c.outputs[0] = body.nodes[size_t(readers[0])].outputs[0];
  for (int32_t r : readers) {
    Node& back = body.nodes[size_t(r)];
    back.op = OpId::Identity;
    back.attrs = {};
  }
}

}  // namespace

void run_convolutions_channels_last(Body& body) {
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    if (body.nodes[i].is_op(OpId::Conv)) run_channels_last(body, int32_t(i));
  }
}

}  // namespace ag::passes
