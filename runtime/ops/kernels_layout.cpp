// Data movement: transpose, copy (reshape, expand_dims, squeeze), concat,
// stack, gather, slice and one_hot, and the shape ops (shape, size, rank).
// These never look at values other than indices, only at bytes, so they
// dispatch on the element size rather than the dtype.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "ag/error.h"
#include "ops/broadcast.h"
#include "ops/kernels.h"
#include "ops/select_helpers.h"

namespace ag::ops {
namespace {

int normalize(int64_t axis, int rank) {
  return int(axis < 0 ? axis + rank : axis);
}

int64_t product(const Shape& s, int from, int to) {
  int64_t n = 1;
  for (int d = from; d < to; ++d) n *= s[d];
  return n;
}

// Row-major strides of `s`.
void strides_of(const Shape& s, int64_t* strides) {
  int64_t stride = 1;
  for (int d = s.rank() - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= s[d];
  }
}

// out[c][r] = x[r][c] in square tiles, so both sides stay in cache.
template <class E>
void transpose_2d(const E* x, E* out, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      int64_t c1 = std::min(cols, c0 + kTile);
      for (int64_t c = c0; c < c1; ++c) {
        for (int64_t r = r0; r < r1; ++r) out[c * rows + r] = x[r * cols + c];
      }
    }
  }
}

}  // namespace

void kernel_copy(const KernelContext& ctx) {
  size_t bytes = size_t(ctx.out_shape->num_elements()) * dtype_size(ctx.out_dtype);
  // An empty buffer may be null, which memcpy must not see.
  if (bytes > 0) std::memcpy(ctx.out, ctx.inputs[0].data, bytes);
}

// Row by row of the output: a row of x where x has the output's last dim,
// else x's one element of that row repeated.
void kernel_broadcast_to(const KernelContext& ctx) {
  const Shape& in = *ctx.inputs[0].shape;
  BroadcastIndexer<1> rows(*ctx.out_shape, {&in});
  select::visit_element_bits(ctx.out_dtype, [&](auto e) {
    using E = decltype(e);
    const E* x = static_cast<const E*>(ctx.inputs[0].data);
    E* out = static_cast<E*>(ctx.out);
    rows.for_each_row([&](int64_t at, const int64_t* from, const int64_t* step, int64_t length) {
      if (step[0] == 0) {
        std::fill_n(out + at, length, x[from[0]]);
      } else {
        std::copy_n(x + from[0], length, out + at);
      }
    });
  });
}

void kernel_transpose(const KernelContext& ctx) {
  const Shape& in = *ctx.inputs[0].shape;
  int rank = in.rank();
  if (ctx.out_shape->num_elements() == 0) return;
  int64_t in_strides[Shape::kMaxRank];
  strides_of(in, in_strides);
  // Output axes with their input strides. Size-1 axes drop out, and output
  // axes that are adjacent in the input (ignoring size-1 axes) merge.
  int rank_without_ones[Shape::kMaxRank];
  for (int d = 0, kept = 0; d < rank; ++d) rank_without_ones[d] = in[d] == 1 ? -1 : kept++;
  int64_t dims[Shape::kMaxRank], strides[Shape::kMaxRank];
  int n = 0, prev = -2;
  for (int i = 0; i < rank; ++i) {
    int src = ctx.attrs->ints.empty() ? rank - 1 - i : normalize(ctx.attrs->ints[size_t(i)], rank);
    int pos = rank_without_ones[src];
    if (pos < 0) continue;
    if (pos == prev + 1) {
      dims[n - 1] *= in[src];
      strides[n - 1] = in_strides[src];
    } else {
      dims[n] = in[src];
      strides[n] = in_strides[src];
      ++n;
    }
    prev = pos;
  }
  if (n <= 1) return kernel_copy(ctx);
  select::visit_element_bits(ctx.out_dtype, [&](auto e) {
    using E = decltype(e);
    const E* x = static_cast<const E*>(ctx.inputs[0].data);
    E* out = static_cast<E*>(ctx.out);
    // Two merged axes are always swapped (else they would have merged).
    if (n == 2) return transpose_2d(x, out, dims[1], dims[0]);
    // Walk the output row by row; each row reads the input at a stride, or
    // is a contiguous run of it when the last axis stays last ([t, b, f] to
    // [b, t, f]), copied as such.
    int last = n - 1;
    int64_t row = dims[last], step = strides[last];
    int64_t rows = 1;
    for (int d = 0; d < last; ++d) rows *= dims[d];
    int64_t counter[Shape::kMaxRank] = {};
    int64_t offset = 0;
    for (int64_t r = 0; r < rows; ++r) {
      E* dst = out + r * row;
      if (step == 1) {
        std::memcpy(dst, x + offset, size_t(row) * sizeof(E));
      } else {
        for (int64_t j = 0; j < row; ++j) dst[j] = x[offset + j * step];
      }
      for (int d = last - 1; d >= 0; --d) {
        offset += strides[d];
        if (++counter[d] < dims[d]) break;
        offset -= strides[d] * dims[d];
        counter[d] = 0;
      }
    }
  });
}

namespace {

// concat and stack: the output is, for each index of the dims before
// `axis`, one chunk of every input in turn. Stack's inputs lack the new axis,
// so their chunk (dims from `axis` on) has the same formula.
void interleave_chunks(const KernelContext& ctx) {
  const Shape& out_shape = *ctx.out_shape;
  int axis = normalize(ctx.attrs->axis, out_shape.rank());
  int64_t outer = product(out_shape, 0, axis);
  size_t element = dtype_size(ctx.out_dtype);
  std::vector<size_t> chunk_bytes(ctx.inputs.size());
  for (size_t k = 0; k < ctx.inputs.size(); ++k) {
    const Shape& s = *ctx.inputs[k].shape;
    chunk_bytes[k] = size_t(product(s, axis, s.rank())) * element;
  }
  char* out = static_cast<char*>(ctx.out);
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t k = 0; k < ctx.inputs.size(); ++k) {
      if (chunk_bytes[k] == 0) continue;  // an empty input's buffer may be null
      std::memcpy(out, static_cast<const char*>(ctx.inputs[k].data) + size_t(o) * chunk_bytes[k],
                  chunk_bytes[k]);
      out += chunk_bytes[k];
    }
  }
}

}  // namespace

void kernel_concat(const KernelContext& ctx) {
  interleave_chunks(ctx);
}
void kernel_stack(const KernelContext& ctx) {
  interleave_chunks(ctx);
}

namespace {

// TensorFlow's spelling: "indices[1,0] = 5 is not in [0, 3)", or "indices =
// 5" for a scalar. Out of line: the gather loop stays small.
[[noreturn, gnu::cold, gnu::noinline]] void throw_index_out_of_range(std::string_view op,
                                                                     const Shape& indices_shape,
                                                                     int64_t flat, int64_t index,
                                                                     int64_t n) {
  std::vector<int64_t> pos(size_t(indices_shape.rank()));
  for (int d = indices_shape.rank() - 1; d >= 0; --d) {
    pos[size_t(d)] = flat % indices_shape[d];
    flat /= indices_shape[d];
  }
  std::string where;
  for (size_t d = 0; d < pos.size(); ++d) where += (d ? "," : "[") + std::to_string(pos[d]);
  if (!where.empty()) where += "]";
  throw InvalidArgumentError(std::string(op) + ": indices" + where + " = " + std::to_string(index) +
                             " is not in [0, " + std::to_string(n) + ")");
}

}  // namespace

// params viewed as [outer, n, inner], the output as [outer, indices, inner].
void kernel_gather(const KernelContext& ctx) {
  const Shape& params = *ctx.inputs[0].shape;
  const Shape& indices_shape = *ctx.inputs[1].shape;
  int axis = normalize(ctx.attrs->axis, params.rank());
  int64_t outer = product(params, 0, axis);
  int64_t n = params[axis];
  int64_t inner = product(params, axis + 1, params.rank());
  int64_t count = indices_shape.num_elements();
  visit_dtype(ctx.inputs[1].dtype, [&](auto iv) {
    using I = decltype(iv);
    if constexpr (!std::is_same_v<I, int32_t> && !std::is_same_v<I, int64_t>) {
      throw InternalError(std::string(ctx.op_name) + ": indices must be int32 or int64");
    } else {
      const I* indices = static_cast<const I*>(ctx.inputs[1].data);
      // Check every index before copying anything.
      for (int64_t i = 0; i < count; ++i) {
        if (indices[i] < 0 || indices[i] >= n)
          throw_index_out_of_range(ctx.op_name, indices_shape, i, int64_t(indices[i]), n);
      }
      select::visit_element_bits(ctx.out_dtype, [&](auto e) {
        using E = decltype(e);
        const E* x = static_cast<const E*>(ctx.inputs[0].data);
        E* out = static_cast<E*>(ctx.out);
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t i = 0; i < count; ++i) {
            const E* src = x + (o * n + int64_t(indices[i])) * inner;
            // A row at a time (x[i] of a matrix: thousands of elements), an
            // element without a call into the C library.
            if (inner == 1) {
              *out = *src;
            } else {
              std::memcpy(out, src, size_t(inner) * sizeof(E));
            }
            out += inner;
          }
        }
      });
    }
  });
}

// attrs.ints = begin then size. The innermost axis that is not taken whole,
// with everything inside it, is one contiguous chunk per index of the outer
// axes.
void kernel_slice(const KernelContext& ctx) {
  const Shape& in = *ctx.inputs[0].shape;
  const Shape& out_shape = *ctx.out_shape;
  int rank = in.rank();
  if (out_shape.num_elements() == 0) return;
  const int64_t* begin = ctx.attrs->ints.data();
  int64_t in_strides[Shape::kMaxRank];
  strides_of(in, in_strides);
  int split = rank - 1;
  while (split >= 0 && out_shape[split] == in[split]) --split;
  if (split < 0) return kernel_copy(ctx);
  size_t element = dtype_size(ctx.out_dtype);
  size_t chunk = size_t(out_shape[split] * in_strides[split]) * element;
  int64_t offset = 0;
  for (int d = 0; d < rank; ++d) offset += begin[d] * in_strides[d];
  int64_t chunks = product(out_shape, 0, split);
  const char* x = static_cast<const char*>(ctx.inputs[0].data);
  char* out = static_cast<char*>(ctx.out);
  int64_t counter[Shape::kMaxRank] = {};
  for (int64_t c = 0; c < chunks; ++c) {
    std::memcpy(out + size_t(c) * chunk, x + size_t(offset) * element, chunk);
    for (int d = split - 1; d >= 0; --d) {
      offset += in_strides[d];
      if (++counter[d] < out_shape[d]) break;
      offset -= in_strides[d] * out_shape[d];
      counter[d] = 0;
    }
  }
}

// indices viewed as [outer, inner] split at attrs.axis, the output as
// [outer, depth, inner]: off_value everywhere, then on_value where the index
// is in [0, depth). An index out of range leaves its row all off, as in
// TensorFlow.
void kernel_one_hot(const KernelContext& ctx) {
  const Shape& indices_shape = *ctx.inputs[0].shape;
  int rank = indices_shape.rank();
  int axis = ctx.attrs->axis == -1 ? rank : int(ctx.attrs->axis);
  int64_t outer = product(indices_shape, 0, axis);
  int64_t inner = product(indices_shape, axis, rank);
  int64_t depth = ctx.attrs->ints[0];
  visit_dtype(ctx.inputs[0].dtype, [&](auto iv) {
    using I = decltype(iv);
    if constexpr (!std::is_same_v<I, int32_t> && !std::is_same_v<I, int64_t>) {
      throw InternalError(std::string(ctx.op_name) + ": indices must be int32 or int64");
    } else {
      const I* indices = static_cast<const I*>(ctx.inputs[0].data);
      select::visit_element_bits(ctx.out_dtype, [&](auto e) {
        using E = decltype(e);
        const E on = *static_cast<const E*>(ctx.inputs[1].data);
        const E off = *static_cast<const E*>(ctx.inputs[2].data);
        E* out = static_cast<E*>(ctx.out);
        int64_t n = ctx.out_shape->num_elements();
        for (int64_t i = 0; i < n; ++i) out[i] = off;
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t q = 0; q < inner; ++q) {
            int64_t index = int64_t(indices[o * inner + q]);
            if (index >= 0 && index < depth) out[(o * depth + index) * inner + q] = on;
          }
        }
      });
    }
  });
}

// ---- Shape ops: they read the input's shape only (kShapeOnly) ----------------

namespace {

// Writes out[i] = v in the output type, int32 or int64; a value int32
// cannot hold is an error, as in TensorFlow.
void write_index(const KernelContext& ctx, int64_t i, int64_t v) {
  if (ctx.out_dtype == DType::int64) {
    static_cast<int64_t*>(ctx.out)[i] = v;
    return;
  }
  if (v > std::numeric_limits<int32_t>::max()) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": " + std::to_string(v) +
                               " does not fit out_type int32; ask for int64");
  }
  static_cast<int32_t*>(ctx.out)[i] = int32_t(v);
}

}  // namespace

void kernel_shape(const KernelContext& ctx) {
  const Shape& s = *ctx.inputs[0].shape;
  for (int i = 0; i < s.rank(); ++i) write_index(ctx, i, s[i]);
}

void kernel_size(const KernelContext& ctx) {
  write_index(ctx, 0, ctx.inputs[0].shape->num_elements());
}

void kernel_rank(const KernelContext& ctx) {
  *static_cast<int32_t*>(ctx.out) = int32_t(ctx.inputs[0].shape->rank());
}

}  // namespace ag::ops
