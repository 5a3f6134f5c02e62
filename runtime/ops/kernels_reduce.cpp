// Reductions, and the scan cumsum, compiled once per instruction set
// (ops/isa.h). The input's dims are collapsed first: adjacent axes that are
// both reduced or both kept merge into one, and size-1 axes drop out. One
// reduced group is the common case and runs as [outer, reduced, inner] loops;
// several groups (say axes 0 and 2 of three) take a general odometer path.
// Both keep a tight, allocation-free inner loop over contiguous memory.
#include <algorithm>
#include <limits>
#include <string>

#include "ag/error.h"
#include "ops/isa.h"
#include "ops/kernel_tables.h"
#include "ops/kernels.h"
#include "ops/parallel.h"
#include "ops/scalar_ops.h"

AG_ISA_BEGIN
namespace ag::ops::AG_ISA_NS {
namespace {

// Which dims a reduction removes, after infer_reduce validated the axes.
uint32_t reduced_mask(const Attrs& attrs, int rank) {
  if (attrs.ints.empty()) return (1u << rank) - 1;
  uint32_t mask = 0;
  for (int64_t axis : attrs.ints) mask |= 1u << (axis < 0 ? axis + rank : axis);
  return mask;
}

struct CollapsedDims {
  int rank = 0;
  int64_t dims[Shape::kMaxRank];
  bool reduced[Shape::kMaxRank];
  int reduced_groups = 0;
};

CollapsedDims collapse(const Shape& shape, uint32_t mask) {
  CollapsedDims c;
  for (int i = 0; i < shape.rank(); ++i) {
    if (shape[i] == 1) continue;
    bool r = (mask >> i) & 1u;
    if (c.rank > 0 && c.reduced[c.rank - 1] == r) {
      c.dims[c.rank - 1] *= shape[i];
    } else {
      c.dims[c.rank] = shape[i];
      c.reduced[c.rank] = r;
      c.reduced_groups += r;
      ++c.rank;
    }
  }
  return c;
}

// A reducer: the starting value and the op that folds one element in.
template <class Op>
struct Reducer {
  Op op;
  template <class T>
  static constexpr T init() {
    if constexpr (std::is_same_v<Op, scalar::AddOp>) {
      return T(0);
    } else if constexpr (std::is_same_v<Op, scalar::MulOp>) {
      return T(1);
    } else if constexpr (std::is_same_v<Op, scalar::MaximumOp>) {
      return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                  : std::numeric_limits<T>::lowest();
    } else {
      static_assert(std::is_same_v<Op, scalar::MinimumOp>);
      return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                  : std::numeric_limits<T>::max();
    }
  }
};

// Folds a contiguous run. Independent lanes let the compiler vectorise and
// keep several additions in flight.
template <class T, class Op>
T reduce_run(const T* x, int64_t n, T acc, Op op) {
  constexpr int kLanes = int(kInOrderReduceElements);
  if (n < kLanes) {  // in order, as kInOrderReduceElements promises
    for (int64_t i = 0; i < n; ++i) acc = op(acc, x[i]);
    return acc;
  }
  T lanes[kLanes];
  for (int l = 0; l < kLanes; ++l) lanes[l] = x[l];
  int64_t i = kLanes;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] = op(lanes[l], x[i + l]);
  }
  for (int l = 0; l < kLanes; ++l) acc = op(acc, lanes[l]);
  for (; i < n; ++i) acc = op(acc, x[i]);
  return acc;
}

// A long run folds fixed blocks, on the intra-op threads, then their results
// in order: the blocks depend only on n, so the result does not depend on the
// thread count.
constexpr int64_t kMaxReduceBlocks = 256;

template <class T, class Op>
T reduce_long_run(const T* x, int64_t n, T acc, Op op) {
  if (n < 2 * kParallelGrain) return reduce_run(x, n, acc, op);
  int64_t block = std::max(kParallelGrain, (n + kMaxReduceBlocks - 1) / kMaxReduceBlocks);
  int64_t blocks = (n + block - 1) / block;
  const T init = Reducer<Op>::template init<T>();
  T partial[kMaxReduceBlocks];
  parallel_for(blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      partial[b] = reduce_run(x + b * block, std::min(block, n - b * block), init, op);
    }
  });
  for (int64_t b = 0; b < blocks; ++b) acc = op(acc, partial[b]);
  return acc;
}

// out[j] = op(out[j], x[j]) for a contiguous run.
template <class T, class Op>
void fold_run(T* out, const T* x, int64_t n, Op op) {
  for (int64_t j = 0; j < n; ++j) out[j] = op(out[j], x[j]);
}

// x viewed as [outer, reduced, inner] -> out [outer, inner].
template <class T, class Op>
void reduce_3d(const T* x, T* out, int64_t outer, int64_t reduced, int64_t inner, Op op, T init) {
  if (outer == 1 && inner == 1) {
    out[0] = reduce_long_run(x, reduced, init, op);
    return;
  }
  if (outer == 1) {  // a column sum: split the columns over the threads
    parallel_for(inner, std::max<int64_t>(1, kParallelGrain / reduced),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t j = begin; j < end; ++j) out[j] = init;
                   for (int64_t r = 0; r < reduced; ++r)
                     fold_run(out + begin, x + r * inner + begin, end - begin, op);
                 });
    return;
  }
  // Rows of the output are independent: split them over the threads.
  int64_t grain = std::max<int64_t>(1, kParallelGrain / (reduced * inner));
  if (inner == 1) {
    parallel_for(outer, grain, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) out[o] = reduce_run(x + o * reduced, reduced, init, op);
    });
    return;
  }
  parallel_for(outer, grain, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      T* acc = out + o * inner;
      const T* block = x + o * reduced * inner;
      for (int64_t j = 0; j < inner; ++j) acc[j] = init;
      for (int64_t r = 0; r < reduced; ++r) fold_run(acc, block + r * inner, inner, op);
    }
  });
}

// Any pattern of reduced groups: walk the input row by row (a row is the
// innermost collapsed dim), with the output offset following only kept dims.
template <class T, class Op>
void reduce_general(const T* x, T* out, int64_t out_size, const CollapsedDims& c, Op op, T init) {
  for (int64_t j = 0; j < out_size; ++j) out[j] = init;
  int last = c.rank - 1;
  int64_t out_strides[Shape::kMaxRank];
  int64_t stride = 1;
  for (int d = last; d >= 0; --d) {
    out_strides[d] = c.reduced[d] ? 0 : stride;
    if (!c.reduced[d]) stride *= c.dims[d];
  }
  int64_t row = c.dims[last];
  int64_t rows = 1;
  for (int d = 0; d < last; ++d) rows *= c.dims[d];
  int64_t counter[Shape::kMaxRank] = {};
  int64_t o = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const T* in = x + r * row;
    if (c.reduced[last]) {
      out[o] = reduce_run(in, row, out[o], op);
    } else {
      fold_run(out + o, in, row, op);
    }
    for (int d = last - 1; d >= 0; --d) {
      o += out_strides[d];
      if (++counter[d] < c.dims[d]) break;
      o -= out_strides[d] * c.dims[d];
      counter[d] = 0;
    }
  }
}

// Reduces input 0 over the axes in `mask`; the output holds the kept ones.
template <class T, class Op>
void reduce_typed(const KernelContext& ctx, Op op, uint32_t mask) {
  const Shape& in_shape = *ctx.inputs[0].shape;
  const T* x = static_cast<const T*>(ctx.inputs[0].data);
  T* out = static_cast<T*>(ctx.out);
  const T init = Reducer<Op>::template init<T>();
  CollapsedDims c = collapse(in_shape, mask);
  if (in_shape.num_elements() == 0) {
    int64_t n = ctx.out_shape->num_elements();
    for (int64_t j = 0; j < n; ++j) out[j] = init;
    return;
  }
  if (c.reduced_groups > 1) {
    reduce_general(x, out, ctx.out_shape->num_elements(), c, op, init);
    return;
  }
  int64_t outer = 1, reduced = 1, inner = 1;
  bool after_reduced = false;
  for (int d = 0; d < c.rank; ++d) {
    if (c.reduced[d]) {
      reduced = c.dims[d];
      after_reduced = true;
    } else {
      (after_reduced ? inner : outer) *= c.dims[d];
    }
  }
  reduce_3d(x, out, outer, reduced, inner, op, init);
}

template <class Op>
void reduce(const KernelContext& ctx, Op op, uint32_t mask) {
  visit_dtype(ctx.inputs[0].dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (Op::template supports<T>) {
      reduce_typed<T>(ctx, op, mask);
    } else {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    }
  });
}

// The reduction over the axes the attrs name.
template <class Op>
void reduce(const KernelContext& ctx, Op op) {
  reduce(ctx, op, reduced_mask(*ctx.attrs, ctx.inputs[0].shape->rank()));
}

// Index of the first extreme element along attrs.axis; x viewed as
// [outer, n, inner], out as [outer, inner].
template <bool kMax>
void arg_reduce(const KernelContext& ctx) {
  const Shape& shape = *ctx.inputs[0].shape;
  int axis = int(ctx.attrs->axis < 0 ? ctx.attrs->axis + shape.rank() : ctx.attrs->axis);
  int64_t outer = 1, inner = 1, n = shape[axis];
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (int d = axis + 1; d < shape.rank(); ++d) inner *= shape[d];
  int64_t* out = static_cast<int64_t*>(ctx.out);
  visit_dtype(ctx.inputs[0].dtype, [&](auto v) {
    using T = decltype(v);
    const T* x = static_cast<const T*>(ctx.inputs[0].data);
    auto better = [](T a, T b) { return kMax ? a > b : a < b; };
    for (int64_t o = 0; o < outer; ++o) {
      const T* block = x + o * n * inner;
      int64_t* best = out + o * inner;
      for (int64_t j = 0; j < inner; ++j) best[j] = 0;
      for (int64_t r = 1; r < n; ++r) {
        const T* row = block + r * inner;
        for (int64_t j = 0; j < inner; ++j) {
          if (better(row[j], block[best[j] * inner + j])) best[j] = r;
        }
      }
    }
  });
}

}  // namespace

void kernel_reduce_sum(const KernelContext& ctx) {
  reduce(ctx, scalar::AddOp{});
}
void kernel_reduce_prod(const KernelContext& ctx) {
  reduce(ctx, scalar::MulOp{});
}
void kernel_reduce_max(const KernelContext& ctx) {
  reduce(ctx, scalar::MaximumOp{});
}
void kernel_reduce_min(const KernelContext& ctx) {
  reduce(ctx, scalar::MinimumOp{});
}

// x summed over its leading axes and those where `like` has 1 and x not.
// Keeping the summed axes as size 1 leaves the sums in like's layout.
void kernel_reduce_sum_to(const KernelContext& ctx) {
  const Shape& x = *ctx.inputs[0].shape;
  const Shape& like = *ctx.inputs[1].shape;
  int lead = x.rank() - like.rank();
  uint32_t mask = 0;
  for (int d = 0; d < x.rank(); ++d) {
    if (d < lead || (like[d - lead] == 1 && x[d] != 1)) mask |= 1u << d;
  }
  reduce(ctx, scalar::AddOp{}, mask);
}

// The sum divided by the count; integers truncate, as in TensorFlow.
void kernel_reduce_mean(const KernelContext& ctx) {
  reduce(ctx, scalar::AddOp{});
  int64_t in_count = ctx.inputs[0].shape->num_elements();
  int64_t out_count = ctx.out_shape->num_elements();
  if (out_count == 0) return;
  int64_t count = in_count / out_count;
  visit_dtype(ctx.out_dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (scalar::kIsInt<T>) {
      if (count == 0) {
        throw InvalidArgumentError(std::string(ctx.op_name) +
                                   ": the mean of no integer elements is undefined");
      }
    }
    if constexpr (!std::is_same_v<T, bool>) {
      T* out = static_cast<T*>(ctx.out);
      for (int64_t j = 0; j < out_count; ++j) out[j] = T(out[j] / T(count));
    }
  });
}

// x viewed as [outer, n, inner]: each row along the axis is the previous
// output row plus an input row (the same one, or with `exclusive` the one
// before), in the order `reverse` gives. Integers wrap, as AddOp does.
void kernel_cumsum(const KernelContext& ctx) {
  const Shape& shape = *ctx.inputs[0].shape;
  int axis = int(ctx.attrs->axis < 0 ? ctx.attrs->axis + shape.rank() : ctx.attrs->axis);
  const bool exclusive = ctx.attrs->ints[0] != 0;
  const bool reverse = ctx.attrs->ints[1] != 0;
  int64_t outer = 1, inner = 1, n = shape[axis];
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (int d = axis + 1; d < shape.rank(); ++d) inner *= shape[d];
  visit_dtype(ctx.inputs[0].dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (!scalar::AddOp::supports<T>) {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    } else {
      const scalar::AddOp add;
      const T* x = static_cast<const T*>(ctx.inputs[0].data);
      T* out = static_cast<T*>(ctx.out);
      // Row k of the scan in visiting order, as an offset into x and out.
      auto row = [&](int64_t o, int64_t k) { return (o * n + (reverse ? n - 1 - k : k)) * inner; };
      for (int64_t o = 0; o < outer && n > 0; ++o) {
        T* first = out + row(o, 0);
        const T* first_in = x + row(o, 0);
        for (int64_t j = 0; j < inner; ++j) first[j] = exclusive ? T(0) : first_in[j];
        for (int64_t k = 1; k < n; ++k) {
          const T* prev = out + row(o, k - 1);
          const T* in = x + row(o, exclusive ? k - 1 : k);
          T* cur = out + row(o, k);
          for (int64_t j = 0; j < inner; ++j) cur[j] = add(prev[j], in[j]);
        }
      }
    }
  });
}

void kernel_argmax(const KernelContext& ctx) {
  arg_reduce<true>(ctx);
}
void kernel_argmin(const KernelContext& ctx) {
  arg_reduce<false>(ctx);
}

#define AG_KERNEL_ADDRESS(kernel) &kernel,
extern const ReductionKernels reduction_kernels = {AG_REDUCTION_KERNELS(AG_KERNEL_ADDRESS)};
#undef AG_KERNEL_ADDRESS

}  // namespace ag::ops::AG_ISA_NS
AG_ISA_END
