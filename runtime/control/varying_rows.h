// Which values of a loop body may have another row count (leading dim) in one
// iteration than in another: a forward analysis over the body, for the while
// gradient (while_gradient.cpp), which must save such a value flat rather
// than as one row of a stack. Internal to the runtime.
//
// Needs: a body in topological order (graph.h guarantees it) and which of
// its placeholders hold the same value in every iteration (the captures).
// Guarantees: a value reported as not varying has the same shape in every
// iteration. It errs on the side of "varying": nested Ifs and Whiles, reads
// of variables and effects are taken to vary wherever their types leave a
// dim unknown.
#pragma once

#include <span>
#include <vector>

#include "graph/graph.h"

namespace ag::detail {

class VaryingRows {
 public:
  // Every placeholder but `invariant_inputs` (the body's captures, by node
  // index) may change its value, and its shape where its type leaves a dim
  // unknown.
  VaryingRows(const graph::Body& body, std::span<const int32_t> invariant_inputs);

  // Whether `v`'s value may differ between iterations.
  bool value_may_vary(graph::ValueRef v) const { return at(value_varies_, v); }
  // Whether `v`'s shape may differ between iterations (only where its type
  // leaves a dim unknown).
  bool shape_may_vary(graph::ValueRef v) const { return at(shape_varies_, v); }
  // Whether `v`'s leading dim may differ between iterations: its shape may,
  // and its type does not fix the leading dim (or the rank).
  bool rows_may_vary(graph::ValueRef v) const { return at(rows_vary_, v); }

 private:
  static bool at(const std::vector<std::vector<char>>& flags, graph::ValueRef v) {
    return flags[size_t(v.node)][size_t(v.output)] != 0;
  }

  // Per node, per output. A value whose shape may vary may vary too.
  std::vector<std::vector<char>> value_varies_, shape_varies_, rows_vary_;
};

}  // namespace ag::detail
