// TensorArrays kept in the layout they are read in. dynamic_rnn stacks its
// states as [time, batch, features] and returns transpose(states.stack(),
// {1, 0, 2}): a full read and write of the array on every call, after a loop
// that wrote it row by row. When a loop's array is read after the loop only
// through such a transpose, the loop can write it transposed instead: row i
// goes to index i of axis a of [batch, time, features] (tensor_array_write's
// attrs.axis), as runs of its inner elements, and the transpose goes. Its
// initial value is transposed once, before the loop (folded when it is a
// constant or the usual zeros op, constant_folding.cpp).
//
// Needs: a valid body whose nested bodies are optimised.
// Guarantees: for a While w and its loop variable k such that
//  - w's result k is read only by transposes (none of them a body output)
//    with one permutation p, where p[a] == 0 for an a > 0 and p without
//    entry a is increasing (the rows' axis moves to position a, the other
//    axes keep their order);
//  - the condition does not read variable k;
//  - the body reads variable k only as input 0 of a chain of
//    tensor_array_writes of a fixed size (keepdims false) on axis 0 (and
//    Identities), each read only by the next, the last one only as the
//    body's output k;
// w's input k becomes transpose(input k, p), a new node just before w;
// variable k has the transposed type (w's result, the condition's and the
// body's placeholder, the chain's writes and Identities); each write of the
// chain writes along axis a; the transposes' readers read w's result k, and
// the transposes are left for dead code elimination. Values are unchanged,
// bit for bit: every row lands where the transpose would have put it. A
// write's index out of range fails with the same message (the size it names
// is the same axis's length). Other loops and readers are left alone.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "passes/passes.h"

namespace ag::passes {
namespace {

using graph::Body;
using graph::count_reads;
using graph::Node;
using graph::NodeKind;
using graph::ValueRef;
using ops::OpId;

// The nodes from body output k back to its placeholder k, when they form a
// chain of fixed-size axis-0 tensor_array_writes and Identities, each read
// once (by the next one, or as output k); else empty.
std::vector<int32_t> write_chain(const Body& body, size_t k) {
  std::vector<int32_t> chain;
  ValueRef v = body.outputs[k];
  bool any_write = false;
  while (v.node != body.placeholders[k]) {
    const Node& n = body.nodes[size_t(v.node)];
    const bool write = n.is_op(OpId::TensorArrayWrite) && n.attrs.axis == 0 && !n.attrs.keepdims;
    if ((!write && !n.is_op(OpId::Identity)) || count_reads(body, v.node) != 1) return {};
    any_write = any_write || write;
    chain.push_back(v.node);
    v = n.inputs[0];
  }
  if (!any_write || count_reads(body, v.node) != 1) return {};
  return chain;
}

// The transposes reading w's result k (node `w` of `body`), when they are
// its only readers, none of them a body output, with one permutation that
// moves axis 0 only; else empty. `perm` gets that permutation.
std::vector<int32_t> transposes_of_result(const Body& body, int32_t w, int32_t k,
                                          std::vector<int64_t>& perm) {
  std::vector<int32_t> transposes;
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    const Node& n = body.nodes[i];
    bool reads = false;
    for (ValueRef in : n.inputs) reads = reads || (in.node == w && in.output == k);
    if (!reads) continue;
    if (!n.is_op(OpId::Transpose)) return {};
    std::vector<int64_t> p = graph::transpose_permutation(n);
    if (!transposes.empty() && p != perm) return {};
    perm = std::move(p);
    transposes.push_back(int32_t(i));
  }
  for (ValueRef out : body.outputs) {
    if (out.node == w && out.output == k) return {};
    for (int32_t t : transposes) {
      if (out.node == t) return {};
    }
  }
  return transposes;
}

// The position perm moves axis 0 to, when it moves only that axis (and not
// to 0).
std::optional<int64_t> rows_axis(const std::vector<int64_t>& perm) {
  for (size_t a = 1; a < perm.size(); ++a) {
    if (perm[a] == 0 && graph::moves_only_one_axis(perm, int64_t(a))) return int64_t(a);
  }
  return std::nullopt;
}

// Node `at` and every later node move one place on (for a node inserted at
// `at`), in `body`'s references to them.
void shift_from(Body& body, int32_t at) {
  graph::remap_inputs(
      body, [at](ValueRef v) { return v.node >= at ? ValueRef{v.node + 1, v.output} : v; });
  for (int32_t& p : body.placeholders) p = p >= at ? p + 1 : p;
}

// Lays out loop variable k of While node `w` transposed, if it qualifies;
// returns whether it did (the body's nodes have then moved).
bool lay_out_transposed(Body& body, int32_t w, size_t k) {
  const Node& loop = body.nodes[size_t(w)];
  const ops::ValueType& type = loop.outputs[k];
  if (type.shape.has_unknown_rank() || type.shape.rank() < 2) return false;
  std::vector<int64_t> perm;
  const std::vector<int32_t> transposes = transposes_of_result(body, w, int32_t(k), perm);
  if (transposes.empty()) return false;
  const std::optional<int64_t> axis = rows_axis(perm);
  const Body& cond = *loop.subgraphs[0];
  if (!axis || count_reads(cond, cond.placeholders[k]) != 0) return false;
  const std::vector<int32_t> chain = write_chain(*loop.subgraphs[1], k);
  if (chain.empty()) return false;

  const Node& reader = body.nodes[size_t(transposes[0])];
  const ops::ValueType transposed = reader.outputs[0];
  Node initial;
  initial.op = OpId::Transpose;
  initial.name = body.unique_name("transpose");
  initial.inputs = {loop.inputs[k]};
  initial.outputs = {transposed};
  initial.attrs = reader.attrs;
  initial.site = reader.site;
  initial.function = reader.function;

  Node& w_node = body.nodes[size_t(w)];
  for (std::shared_ptr<Body>& sub : w_node.subgraphs) {
    if (sub.use_count() > 1) sub = std::make_shared<Body>(*sub);
    sub->nodes[size_t(sub->placeholders[k])].outputs = {transposed};
  }
  Body& loop_body = *w_node.subgraphs[1];
  for (int32_t c : chain) {
    Node& n = loop_body.nodes[size_t(c)];
    n.outputs = {transposed};
    if (n.is_op(OpId::TensorArrayWrite)) n.attrs.axis = *axis;
  }
  w_node.outputs[k] = transposed;
  const ValueRef result{w, int32_t(k)};
  graph::remap_inputs(body, [&](ValueRef v) {
    for (int32_t t : transposes) {
      if (v.node == t) return result;
    }
    return v;
  });
  shift_from(body, w);
  body.nodes.insert(body.nodes.begin() + w, std::move(initial));
  body.nodes[size_t(w) + 1].inputs[k] = ValueRef{w, 0};
  return true;
}

// One loop variable laid out transposed, if any qualifies.
bool lay_out_one(Body& body) {
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    if (body.nodes[i].kind != NodeKind::While) continue;
    for (size_t k = 0; k < body.nodes[i].outputs.size(); ++k) {
      if (lay_out_transposed(body, int32_t(i), k)) return true;
    }
  }
  return false;
}

}  // namespace

void lay_out_arrays_transposed(Body& body) {
  while (lay_out_one(body)) {
  }
}

}  // namespace ag::passes
