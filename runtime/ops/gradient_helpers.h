// What the gradient functions of gradients_*.cpp share: undoing broadcasting,
// restoring reduced axes, and the error of a gradient that cannot be built.
// Internal to the runtime.
#pragma once

#include <string>
#include <vector>

#include "ag/ops.h"
#include "ops/op_registry.h"

namespace ag::ops {

// "model.cpp:12" for a user's call site, "" for none.
std::string site_string(CallSite site);

// The error for a gradient this op cannot build, naming the op and its site.
[[noreturn]] void throw_gradient_error(const GradContext& ctx, const std::string& why);

// `grad` (the shape of the op's output) summed over the axes along which
// input `input` was broadcast, in that input's shape. Where an input dim is
// unknown while tracing, whether it was broadcast is decided when the graph
// runs (reduce_sum_to); static shapes take the reduce_sum path.
Tensor unbroadcast(const GradContext& ctx, const Tensor& grad, size_t input);

// `t` with the axes a reduction removed put back as size 1 (its keepdims
// form); `rank` is the reduction's input rank.
Tensor with_reduced_axes(const Tensor& t, int rank, const Attrs& attrs, CallSite site);

// Ones of x's shape and dtype: a constant when the shape is static.
Tensor ones_of(const Tensor& x, CallSite site);

// The reduction's axes, normalized and sorted (empty attrs: every axis).
std::vector<int64_t> reduced_axes(int rank, const Attrs& attrs);

}  // namespace ag::ops
