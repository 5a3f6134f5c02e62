// The gradient of a staged If (if_gradient.cpp). Internal to the runtime.
#pragma once

#include <memory>
#include <vector>

#include "autodiff/tape.h"
#include "graph/graph.h"

namespace ag::detail {

// The gradient of an If node on `pred` with these branch bodies, whose
// placeholders are bound to `captures`: for each input (pred, then the
// captures), its gradient from those of the node's outputs.
autodiff::StagedGradient if_gradient(const Tensor& pred, std::vector<Tensor> captures,
                                     std::shared_ptr<const graph::Body> then_body,
                                     std::shared_ptr<const graph::Body> else_body);

}  // namespace ag::detail
