// Algebraic simplification: identities that make a node compute its input.
//
// Needs: a valid body.
// Guarantees: in one forward sweep, the uses of each node matching one of
//   x * 1, 1 * x, x + 0, 0 + x, x - 0, x / 1,
//   neg(neg(x)), logical_not(logical_not(x)),
//   cast(x) to x's own dtype, Identity(x),
// are forwarded to x, where "1" and "0" are Const nodes whose every element
// equals that value. Only when the node's output type (dtype and shape)
// equals x's (and, if x's rank is unknown, the constant is a scalar), so
// broadcasting cannot change the shape at run time ([3] * ones(scalar) yes,
// scalar * ones([3]) no).
// x + 0 -> x ignores the sign of zero (-0.0 + 0.0 is +0.0), as TensorFlow's
// Grappler does. Nodes named by body.outputs (the tracer's Identity outputs)
// are never replaced. The replaced nodes stay, unused, for dead-code
// elimination.

#include <optional>

#include "passes/passes.h"
#include "passes/value_forwarding.h"

namespace ag::passes {
namespace {

using graph::Body;
using graph::Node;
using graph::NodeKind;
using graph::ValueRef;
using ops::OpId;

// True when `v` is a Const node whose every element equals `scalar`.
bool is_splat(const Body& body, ValueRef v, double scalar) {
  const Node& node = body.nodes[size_t(v.node)];
  if (node.kind != NodeKind::Const || !node.value.defined()) return false;
  const Tensor& t = node.value;
  return visit_dtype(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* data = t.data<T>();
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      if (double(data[i]) != scalar) return false;
    }
    return true;
  });
}

bool same_type(const ops::ValueType& a, const ops::ValueType& b) {
  return a.dtype == b.dtype && a.shape == b.shape;
}

// Whether `x op constant` has x's type however x's unknown dims resolve.
// With x's rank known, static broadcasting gives x's shape back only when
// each dim of the constant is 1 or x's own known dim, which stays true at run
// time. With x's rank unknown, only a scalar constant cannot add dims.
bool keeps_type_of(const Body& body, const Node& node, ValueRef x, ValueRef constant) {
  const ops::ValueType& x_type = body.type_of(x);
  if (!same_type(x_type, node.outputs[0])) return false;
  return !x_type.shape.has_unknown_rank() || body.type_of(constant).shape.rank() == 0;
}

// `x op c` or, when `commutes`, `c op x`, with c a splat of `scalar`.
std::optional<ValueRef> binary_identity(const Body& body, const Node& node, double scalar,
                                        bool commutes) {
  ValueRef lhs = node.inputs[0], rhs = node.inputs[1];
  if (is_splat(body, rhs, scalar) && keeps_type_of(body, node, lhs, rhs)) return lhs;
  if (commutes && is_splat(body, lhs, scalar) && keeps_type_of(body, node, rhs, lhs)) return rhs;
  return std::nullopt;
}

// f(f(x)) for an involution f.
std::optional<ValueRef> double_application(const Body& body, const Node& node) {
  const Node& inner = body.nodes[size_t(node.inputs[0].node)];
  if (!inner.is_op(node.op)) return std::nullopt;
  ValueRef x = inner.inputs[0];
  if (!same_type(body.type_of(x), node.outputs[0])) return std::nullopt;
  return x;
}

// The value `node` always equals, if one of the identities applies.
std::optional<ValueRef> simplified(const Body& body, const Node& node) {
  if (node.kind != NodeKind::Op) return std::nullopt;
  switch (node.op) {
    case OpId::Mul:
      return binary_identity(body, node, 1.0, /*commutes=*/true);
    case OpId::Add:
      return binary_identity(body, node, 0.0, /*commutes=*/true);
    case OpId::Sub:
      return binary_identity(body, node, 0.0, /*commutes=*/false);
    case OpId::Div:
      return binary_identity(body, node, 1.0, /*commutes=*/false);
    case OpId::Neg:
    case OpId::LogicalNot:
      return double_application(body, node);
    case OpId::Cast:
    case OpId::Identity:
      if (same_type(body.type_of(node.inputs[0]), node.outputs[0])) return node.inputs[0];
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace

void simplify_algebra(Body& body) {
  ValueForwarding forwarding(body);
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    Node& node = body.nodes[i];
    forwarding.rewrite_inputs(node);
    if (!forwarding.can_replace(int32_t(i))) continue;
    if (std::optional<ValueRef> x = simplified(body, node)) forwarding.replace(int32_t(i), *x);
  }
}

}  // namespace ag::passes
