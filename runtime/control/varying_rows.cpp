// The forward analysis of varying_rows.h: one pass over the body in order.
// A value's shape may vary only where its type leaves a dim unknown, and
// then when what fixes that dim at run time may vary: its inputs' shapes for
// most ops (elementwise, reductions, layout, matmul: their infer functions
// read shapes and attrs only), its inputs' values too for the ops whose
// output shape depends on them (ops::kShapeFromValues), anything for other
// nodes.
#include "control/varying_rows.h"

#include <algorithm>

namespace ag::detail {
namespace {

using graph::Node;
using graph::NodeKind;
using graph::ValueRef;

bool fixes_shape(const ops::ValueType& type) {
  return type.shape.is_fully_defined();
}

bool fixes_rows(const ops::ValueType& type) {
  return !type.shape.has_unknown_rank() && type.shape.rank() >= 1 && type.shape[0] != kUnknownDim;
}

}  // namespace

VaryingRows::VaryingRows(const graph::Body& body, std::span<const int32_t> invariant_inputs) {
  size_t n = body.nodes.size();
  value_varies_.resize(n);
  shape_varies_.resize(n);
  rows_vary_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = body.nodes[i];
    auto any_input = [&](const std::vector<std::vector<char>>& flags) {
      return std::any_of(node.inputs.begin(), node.inputs.end(),
                         [&](ValueRef in) { return at(flags, in); });
    };
    bool value = false;      // an output's value may vary
    bool undecided = false;  // an output whose type leaves a dim unknown may change shape
    switch (node.kind) {
      case NodeKind::Placeholder:
        value = undecided = std::find(invariant_inputs.begin(), invariant_inputs.end(),
                                      int32_t(i)) == invariant_inputs.end();
        break;
      case NodeKind::Const:
        break;
      case NodeKind::Op: {
        const ops::OpDef& def = ops::op_def(node.op);
        if (def.flags & ops::kShapeOnly) {
          value = any_input(shape_varies_);
        } else {
          value = node.is_stateful() || any_input(value_varies_);
        }
        undecided = (def.flags & ops::kShapeFromValues) ? any_input(value_varies_)
                                                        : any_input(shape_varies_);
        break;
      }
      default:  // If, While, Fused, variable reads and assignments, effects
        value = undecided = true;
        break;
    }
    for (const ops::ValueType& type : node.outputs) {
      bool shape = undecided && !fixes_shape(type);
      value_varies_[i].push_back(value || shape);
      shape_varies_[i].push_back(shape);
      rows_vary_[i].push_back(shape && !fixes_rows(type));
    }
  }
}

}  // namespace ag::detail
