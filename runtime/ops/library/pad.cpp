// pad (tf.pad, numpy.pad): each dimension grown by `before` elements in
// front and `after` behind, filled with a constant (CONSTANT), the input
// mirrored without its edge element (REFLECT) or with it (SYMMETRIC), or
// the edge element repeated (EDGE). pad_grad is its transpose: each input
// element's gradient sums the gradient at every position it was copied to.
// Attrs: ints = [mode, before_0, after_0, before_1, after_1, ...], the
// constant in lo.
#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/dispatch.h"
#include "ops/kernels.h"
#include "ops/pad_attrs.h"

namespace ag::ops {
namespace {

// The padded shape of `shape`, or an InvalidArgumentError naming the
// dimension whose padding the mode cannot give. Unknown dims stay unknown.
Shape padded_shape(std::string_view op, const PadAttrs& a, const Shape& shape) {
  if (size_t(shape.rank()) != a.paddings.size()) {
    throw InvalidArgumentError(std::string(op) + ": paddings has " +
                               std::to_string(a.paddings.size()) + " rows for a tensor of rank " +
                               std::to_string(shape.rank()) +
                               "; give one [before, after] pair per dimension");
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < shape.rank(); ++d) {
    const auto [before, after] = a.paddings[size_t(d)];
    const int64_t n = shape[d];
    const std::string where = std::string(op) + ": dimension " + std::to_string(d) + " (size " +
                              std::to_string(n) + ") padded by [" + std::to_string(before) + ", " +
                              std::to_string(after) + "]";
    if (before < 0 || after < 0) throw InvalidArgumentError(where + ": paddings must be >= 0");
    if (n != kUnknownDim) {
      const int64_t most = std::max(before, after);
      if (a.mode == PadMode::kReflect && most > n - 1 && most > 0) {
        throw InvalidArgumentError(where + ": REFLECT pads at most size - 1 on each side");
      }
      if (a.mode == PadMode::kSymmetric && most > n) {
        throw InvalidArgumentError(where + ": SYMMETRIC pads at most size on each side");
      }
      if (a.mode == PadMode::kEdge && n == 0 && most > 0) {
        throw InvalidArgumentError(where + ": EDGE has no element to repeat");
      }
    }
    dims.push_back(n == kUnknownDim ? kUnknownDim : n + before + after);
  }
  return Shape(dims);
}

// For each index along a padded dimension, the input index it copies, or -1
// for the constant.
std::vector<int64_t> source_indices(int64_t n, std::pair<int64_t, int64_t> padding, PadMode mode) {
  const auto [before, after] = padding;
  std::vector<int64_t> source(size_t(n + before + after));
  for (int64_t o = 0; o < int64_t(source.size()); ++o) {
    int64_t i = o - before;
    if (i < 0 || i >= n) {
      switch (mode) {
        case PadMode::kConstant:
          i = -1;
          break;
        case PadMode::kReflect:
          i = i < 0 ? -i : 2 * (n - 1) - i;
          break;
        case PadMode::kSymmetric:
          i = i < 0 ? -i - 1 : 2 * n - 1 - i;
          break;
        case PadMode::kEdge:
          i = std::clamp<int64_t>(i, 0, n - 1);
          break;
      }
    }
    source[size_t(o)] = i;
  }
  return source;
}

// Calls row(padded_offset, input_offset, last) for each row of the padded
// shape along its last dimension: input_offset is where the input row it
// copies from starts, or -1 when the row is all constant; last maps the
// row's elements to input elements (-1: constant).
template <class Row>
void for_each_padded_row(const PadAttrs& a, const Shape& input, Row row) {
  const int rank = input.rank();
  if (rank == 0) {
    const std::vector<int64_t> none{0};
    row(int64_t(0), int64_t(0), none);
    return;
  }
  std::vector<std::vector<int64_t>> sources;
  std::vector<int64_t> in_strides(size_t(rank), 1);
  for (int d = rank - 1; d >= 0; --d) {
    sources.push_back(source_indices(input[d], a.paddings[size_t(d)], a.mode));
    if (d + 1 < rank) in_strides[size_t(d)] = in_strides[size_t(d) + 1] * input[d + 1];
  }
  std::reverse(sources.begin(), sources.end());
  const std::vector<int64_t>& last = sources.back();
  const auto row_length = int64_t(last.size());
  int64_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d) rows *= int64_t(sources[size_t(d)].size());
  if (row_length == 0) return;
  std::vector<int64_t> index(size_t(rank), 0);  // the odometer over the leading dims
  for (int64_t r = 0; r < rows; ++r) {
    int64_t in_offset = 0;
    for (int d = 0; d + 1 < rank && in_offset >= 0; ++d) {
      const int64_t s = sources[size_t(d)][size_t(index[size_t(d)])];
      in_offset = s < 0 ? -1 : in_offset + s * in_strides[size_t(d)];
    }
    row(r * row_length, in_offset, last);
    for (int d = rank - 2; d >= 0; --d) {
      if (++index[size_t(d)] < int64_t(sources[size_t(d)].size())) break;
      index[size_t(d)] = 0;
    }
  }
}

template <class T>
void pad_typed(const KernelContext& ctx, const PadAttrs& a) {
  const T* x = static_cast<const T*>(ctx.inputs[0].data);
  T* out = static_cast<T*>(ctx.out);
  const T constant = T(a.constant);
  for_each_padded_row(a, *ctx.inputs[0].shape,
                      [&](int64_t o, int64_t in, const std::vector<int64_t>& last) {
                        T* row = out + o;
                        for (size_t j = 0; j < last.size(); ++j) {
                          row[j] = in < 0 || last[j] < 0 ? constant : x[in + last[j]];
                        }
                      });
}

// dx = 0, then each element of dy added to the input element it copies.
template <class T>
void pad_grad_typed(const KernelContext& ctx, const PadAttrs& a) {
  const T* dy = static_cast<const T*>(ctx.inputs[0].data);
  T* dx = static_cast<T*>(ctx.out);
  std::fill(dx, dx + ctx.out_shape->num_elements(), T(0));
  for_each_padded_row(a, *ctx.out_shape,
                      [&](int64_t o, int64_t in, const std::vector<int64_t>& last) {
                        if (in < 0) return;
                        const T* row = dy + o;
                        for (size_t j = 0; j < last.size(); ++j) {
                          if (last[j] >= 0) dx[in + last[j]] += row[j];
                        }
                      });
}

PadMode parse_pad_mode(std::string_view mode) {
  std::string upper(mode);
  for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  for (PadMode m : {PadMode::kConstant, PadMode::kReflect, PadMode::kSymmetric, PadMode::kEdge}) {
    if (upper == pad_mode_name(m)) return m;
  }
  throw InvalidArgumentError("pad: unknown mode '" + std::string(mode) +
                             "'; use CONSTANT, REFLECT, SYMMETRIC or EDGE");
}

Attrs pad_attrs(std::string_view mode, const std::vector<std::pair<int64_t, int64_t>>& paddings,
                double constant_values) {
  Attrs attrs;
  attrs.ints.push_back(int64_t(parse_pad_mode(mode)));
  for (const auto& [before, after] : paddings) {
    attrs.ints.push_back(before);
    attrs.ints.push_back(after);
  }
  attrs.lo = constant_values;
  return attrs;
}

}  // namespace

ValueType infer_pad(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  if (x.shape.has_unknown_rank())
    throw InvalidArgumentError(std::string(ctx.op_name) + ": needs an input of known rank");
  return {x.dtype, padded_shape(ctx.op_name, PadAttrs::decode(ctx.attrs), x.shape)};
}

void kernel_pad(const KernelContext& ctx) {
  const PadAttrs a = PadAttrs::decode(*ctx.attrs);
  padded_shape(ctx.op_name, a, *ctx.inputs[0].shape);  // a run-time dim's limits
  visit_dtype(ctx.out_dtype, [&](auto v) { pad_typed<decltype(v)>(ctx, a); });
}

std::vector<Tensor> grad_pad(const GradContext& c) {
  return {ops::apply(OpId::PadGrad, {c.grad}, c.attrs, c.site)};
}

// The input's shape: the padded one less the paddings.
ValueType infer_pad_grad(const InferContext& ctx) {
  const ValueType& dy = ctx.inputs[0];
  const PadAttrs a = PadAttrs::decode(ctx.attrs);
  if (dy.dtype == DType::bool_)
    throw InvalidArgumentError(std::string(ctx.op_name) + ": unsupported dtype bool");
  if (dy.shape.has_unknown_rank() || size_t(dy.shape.rank()) != a.paddings.size()) {
    throw InvalidArgumentError(std::string(ctx.op_name) +
                               ": needs a gradient of the padded tensor's rank");
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < dy.shape.rank(); ++d) {
    const auto [before, after] = a.paddings[size_t(d)];
    dims.push_back(dy.shape[d] == kUnknownDim ? kUnknownDim : dy.shape[d] - before - after);
  }
  return {dy.dtype, Shape(dims)};
}

void kernel_pad_grad(const KernelContext& ctx) {
  const PadAttrs a = PadAttrs::decode(*ctx.attrs);
  visit_dtype(ctx.out_dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_same_v<T, bool>) {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    } else {
      pad_grad_typed<T>(ctx, a);
    }
  });
}

// pad_grad is linear: its transpose, pad with a zero constant.
std::vector<Tensor> grad_pad_grad(const GradContext& c) {
  Attrs attrs = c.attrs;
  attrs.lo = 0;
  return {ops::apply(OpId::Pad, {c.grad}, attrs, c.site)};
}

}  // namespace ag::ops

namespace ag::api {

Tensor pad(const Tensor& tensor, const std::vector<std::pair<int64_t, int64_t>>& paddings,
           std::string_view mode, double constant_values, CallSite site) {
  return ops::apply(ops::OpId::Pad, {tensor}, ops::pad_attrs(mode, paddings, constant_values),
                    site);
}

}  // namespace ag::api
