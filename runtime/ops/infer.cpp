// Shape and dtype rules of every op. Unknown dims (kUnknownDim) flow through:
// a rule computes what it can and leaves the rest unknown; the executor calls
// the same rule again with the concrete shapes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "ag/error.h"
#include "core/string_pool.h"
#include "ops/kernels.h"
#include "ops/strings.h"

namespace ag::ops {
namespace {

std::string op_prefix(const InferContext& ctx) {
  return std::string(ctx.op_name) + ": ";
}

[[noreturn]] void fail(const InferContext& ctx, const std::string& what) {
  throw InvalidArgumentError(op_prefix(ctx) + what);
}

void require_dtype(const InferContext& ctx, bool ok, DType got) {
  if (!ok)
    throw InvalidArgumentError(op_prefix(ctx) + "unsupported dtype " +
                               std::string(dtype_name(got)));
}

// Attrs may carry any byte; only the enumerators are dtypes.
void require_valid_dtype(const InferContext& ctx, DType dtype) {
  if (uint8_t(dtype) >= kNumDTypes) {
    fail(ctx, "unsupported dtype (enum value " + std::to_string(int(dtype)) + ")");
  }
}

void require_known_rank(const InferContext& ctx, const Shape& s) {
  if (s.has_unknown_rank()) fail(ctx, "needs an input of known rank");
}

// Normalises a possibly negative axis against `rank`.
int64_t normalize_axis(const InferContext& ctx, int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) {
    fail(ctx, "axis " + std::to_string(axis) + " is out of range for a tensor of rank " +
                  std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

ValueType binary_same_dtype(const InferContext& ctx) {
  const ValueType& a = ctx.inputs[0];
  const ValueType& b = ctx.inputs[1];
  if (a.dtype != b.dtype) {
    fail(ctx, "operands have different dtypes " + std::string(dtype_name(a.dtype)) + " and " +
                  std::string(dtype_name(b.dtype)));
  }
  return {a.dtype, broadcast_shapes(a.shape, b.shape)};
}

}  // namespace

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  if (a.has_unknown_rank() || b.has_unknown_rank()) return Shape::unknown_rank();
  int rank = std::max(a.rank(), b.rank());
  Shape out;
  for (int i = 0; i < rank; ++i) {
    int ia = i - (rank - a.rank());
    int ib = i - (rank - b.rank());
    int64_t da = ia >= 0 ? a[ia] : 1;
    int64_t db = ib >= 0 ? b[ib] : 1;
    int64_t d;
    if (da == 1) {
      d = db;
    } else if (db == 1) {
      d = da;
    } else if (da == kUnknownDim || db == kUnknownDim) {
      d = da == kUnknownDim ? db : da;
    } else if (da == db) {
      d = da;
    } else {
      throw InvalidArgumentError("Incompatible shapes: " + a.to_list_string() + " vs. " +
                                 b.to_list_string());
    }
    out.push_back(d);
  }
  return out;
}

ValueType infer_unary_numeric(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  require_dtype(ctx, x.dtype != DType::bool_, x.dtype);
  return x;
}

ValueType infer_unary_floating(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  require_dtype(ctx, is_floating(x.dtype), x.dtype);
  return x;
}

namespace {
// The error of an op that takes fewer dtypes than its neighbours, as its
// TensorFlow namesake (`tf_module` + its name) does: what it takes, and what
// to do instead.
void require_as_tensorflow(const InferContext& ctx, bool ok, DType got, const char* takes,
                           const char* tf_module, const char* instead) {
  if (!ok) {
    fail(ctx, "unsupported dtype " + std::string(dtype_name(got)) + "; it takes " + takes +
                  ", as " + tf_module + std::string(ctx.op_name) + " (" + instead + ")");
  }
}
}  // namespace

ValueType infer_floor_ceil(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  require_as_tensorflow(ctx, is_floating(x.dtype), x.dtype, "float32 or float64", "tf.math.",
                        "an integer tensor is already whole: use it as it is, or ag::cast it");
  return x;
}

ValueType infer_unary_bool(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  require_dtype(ctx, x.dtype == DType::bool_, x.dtype);
  return x;
}

namespace {
// TensorFlow's bitwise ops take integers only.
void require_integer(const InferContext& ctx, DType dtype) {
  require_as_tensorflow(ctx, is_integer(dtype), dtype, "int32 or int64", "tf.bitwise.",
                        "on bool tensors, use the logical ops");
}
}  // namespace

ValueType infer_unary_integer(const InferContext& ctx) {
  require_integer(ctx, ctx.inputs[0].dtype);
  return ctx.inputs[0];
}

// is_nan, is_inf, is_finite: a bool per element of a floating tensor.
ValueType infer_unary_floating_test(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  require_as_tensorflow(ctx, is_floating(x.dtype), x.dtype, "float32 or float64", "tf.math.",
                        "an integer tensor has no NaN or infinity");
  return {DType::bool_, x.shape};
}

ValueType infer_identity(const InferContext& ctx) {
  return ctx.inputs[0];
}

ValueType infer_cast(const InferContext& ctx) {
  require_valid_dtype(ctx, ctx.attrs.dtype);
  return {ctx.attrs.dtype, ctx.inputs[0].shape};
}

ValueType infer_binary_numeric(const InferContext& ctx) {
  ValueType out = binary_same_dtype(ctx);
  require_dtype(ctx, out.dtype != DType::bool_, out.dtype);
  return out;
}

ValueType infer_binary_floating(const InferContext& ctx) {
  ValueType out = binary_same_dtype(ctx);
  require_dtype(ctx, is_floating(out.dtype), out.dtype);
  return out;
}

ValueType infer_binary_integer(const InferContext& ctx) {
  ValueType out = binary_same_dtype(ctx);
  require_integer(ctx, out.dtype);
  return out;
}

ValueType infer_binary_bool(const InferContext& ctx) {
  ValueType out = binary_same_dtype(ctx);
  require_dtype(ctx, out.dtype == DType::bool_, out.dtype);
  return out;
}

ValueType infer_compare(const InferContext& ctx) {
  ValueType out = binary_same_dtype(ctx);
  return {DType::bool_, out.shape};
}

ValueType infer_where(const InferContext& ctx) {
  const ValueType& c = ctx.inputs[0];
  const ValueType& x = ctx.inputs[1];
  const ValueType& y = ctx.inputs[2];
  if (c.dtype != DType::bool_)
    fail(ctx, "condition must be bool, got " + std::string(dtype_name(c.dtype)));
  if (x.dtype != y.dtype) {
    fail(ctx, "branches have different dtypes " + std::string(dtype_name(x.dtype)) + " and " +
                  std::string(dtype_name(y.dtype)));
  }
  return {x.dtype, broadcast_shapes(c.shape, broadcast_shapes(x.shape, y.shape))};
}

// Inputs t, clip_value_min, clip_value_max, one dtype (the API converts C++
// scalars to t's). As in TensorFlow, the bounds may broadcast to t's shape
// but never enlarge it.
ValueType infer_clip_by_value(const InferContext& ctx) {
  const ValueType& t = ctx.inputs[0];
  require_dtype(ctx, t.dtype != DType::bool_, t.dtype);
  Shape out = t.shape;
  const char* names[] = {"clip_value_min", "clip_value_max"};
  for (int i = 1; i <= 2; ++i) {
    const ValueType& bound = ctx.inputs[size_t(i)];
    const std::string name = names[i - 1];
    if (bound.dtype != t.dtype) {
      fail(ctx, name + " has dtype " + std::string(dtype_name(bound.dtype)) + " but t has dtype " +
                    std::string(dtype_name(t.dtype)) + "; ag::cast one of them");
    }
    Shape broadcast = broadcast_shapes(t.shape, bound.shape);
    if (!broadcast.is_compatible_with(t.shape)) {
      fail(ctx, name + " of shape " + bound.shape.to_list_string() +
                    " would broadcast t of shape " + t.shape.to_list_string() + " to " +
                    broadcast.to_list_string() + "; the bounds must broadcast to t's shape");
    }
    out = broadcast_shapes(out, bound.shape);
  }
  return {t.dtype, out};
}

// The reduced axes as a bitmask over the input's rank (empty attrs: all).
static uint32_t reduced_axes(const InferContext& ctx, int rank) {
  if (ctx.attrs.ints.empty()) return rank >= 32 ? ~0u : (1u << rank) - 1;
  uint32_t mask = 0;
  for (int64_t a : ctx.attrs.ints) {
    int64_t axis = normalize_axis(ctx, a, rank);
    if (mask & (1u << axis)) fail(ctx, "axis " + std::to_string(a) + " appears twice");
    mask |= 1u << axis;
  }
  return mask;
}

ValueType infer_reduce(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  require_known_rank(ctx, x.shape);
  std::string_view name = ctx.op_name;
  if (name == "reduce_any" || name == "reduce_all") {
    if (x.dtype != DType::bool_)
      fail(ctx, "needs a bool tensor, got " + std::string(dtype_name(x.dtype)) +
                    "; compare first, e.g. ag::" + std::string(name) + "(x > 0)");
  } else if (name != "reduce_max" && name != "reduce_min") {
    require_dtype(ctx, x.dtype != DType::bool_, x.dtype);
  }
  uint32_t mask = reduced_axes(ctx, x.shape.rank());
  Shape out;
  for (int i = 0; i < x.shape.rank(); ++i) {
    if (mask & (1u << i)) {
      if (ctx.attrs.keepdims) out.push_back(1);
    } else {
      out.push_back(x.shape[i]);
    }
  }
  return {x.dtype, out};
}

ValueType infer_arg_reduce(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  require_known_rank(ctx, x.shape);
  require_dtype(ctx, x.dtype != DType::bool_, x.dtype);
  if (x.shape.rank() == 0) fail(ctx, "needs a tensor of rank at least 1");
  int64_t axis = normalize_axis(ctx, ctx.attrs.axis, x.shape.rank());
  if (x.shape[int(axis)] == 0) fail(ctx, "cannot reduce an empty axis");
  Shape out;
  for (int i = 0; i < x.shape.rank(); ++i) {
    if (i != axis) out.push_back(x.shape[i]);
  }
  return {DType::int64, out};
}

// attrs.axis; attrs.ints = {exclusive, reverse}.
ValueType infer_cumsum(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  require_known_rank(ctx, x.shape);
  require_dtype(ctx, x.dtype != DType::bool_, x.dtype);
  normalize_axis(ctx, ctx.attrs.axis, x.shape.rank());
  if (ctx.attrs.ints.size() != 2) fail(ctx, "needs the exclusive and reverse flags");
  return x;
}

namespace {

// Whether `from` broadcasts to `to`: its dims, aligned from the last, each 1
// or `to`'s (a dim unknown on either side may be). reduce_sum_to's and
// broadcast_to's rule.
bool broadcasts_to(const Shape& from, const Shape& to) {
  const int leading = to.rank() - from.rank();
  if (leading < 0) return false;
  for (int d = 0; d < from.rank(); ++d) {
    const int64_t have = from[d], want = to[d + leading];
    if (have != kUnknownDim && want != kUnknownDim && have != 1 && have != want) return false;
  }
  return true;
}

}  // namespace

// x summed to like's shape: like must broadcast to x's shape. A dim of like
// unknown while tracing stays unknown, unless x's is 1 (then like's is too).
ValueType infer_reduce_sum_to(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  const ValueType& like = ctx.inputs[1];
  require_known_rank(ctx, x.shape);
  require_known_rank(ctx, like.shape);
  require_dtype(ctx, x.dtype != DType::bool_, x.dtype);
  if (!broadcasts_to(like.shape, x.shape)) {
    fail(ctx, "cannot sum a tensor of shape " + x.shape.to_list_string() + " to shape " +
                  like.shape.to_list_string() + ", which does not broadcast to it");
  }
  const int lead = x.shape.rank() - like.shape.rank();
  Shape out;
  for (int k = 0; k < like.shape.rank(); ++k) {
    const int64_t want = like.shape[k], have = x.shape[k + lead];
    out.push_back(want == kUnknownDim && have == 1 ? 1 : want);
  }
  return {x.dtype, out};
}

// [..., m, k] x [..., k, n] -> [..., m, n], either operand transposed first
// (attrs.ints = [transpose_a, transpose_b], or empty for neither); the batch
// dims broadcast as NumPy's do.
ValueType infer_matmul(const InferContext& ctx) {
  const ValueType& a = ctx.inputs[0];
  const ValueType& b = ctx.inputs[1];
  require_known_rank(ctx, a.shape);
  require_known_rank(ctx, b.shape);
  if (a.dtype != b.dtype) fail(ctx, "operands have different dtypes");
  require_dtype(ctx, a.dtype != DType::bool_, a.dtype);
  int ra = a.shape.rank(), rb = b.shape.rank();
  const auto shapes = [&] { return a.shape.to_list_string() + " and " + b.shape.to_list_string(); };
  if (ra < 2 || rb < 2) fail(ctx, "expects two tensors of rank >= 2, got " + shapes());
  if (!ctx.attrs.ints.empty() && ctx.attrs.ints.size() != 2)
    fail(ctx, "needs the transpose_a and transpose_b flags");
  const bool trans_a = !ctx.attrs.ints.empty() && ctx.attrs.ints[0] != 0;
  const bool trans_b = !ctx.attrs.ints.empty() && ctx.attrs.ints[1] != 0;
  int64_t k1 = a.shape[trans_a ? ra - 2 : ra - 1], k2 = b.shape[trans_b ? rb - 1 : rb - 2];
  if (k1 != kUnknownDim && k2 != kUnknownDim && k1 != k2) {
    fail(ctx, "inner dimensions must match, got " + shapes() +
                  (trans_a || trans_b ? std::string(" (after the transposes)") : std::string()));
  }
  const int batch_rank = std::max(ra, rb) - 2;
  Shape out;
  for (int i = 0; i < batch_rank; ++i) {
    const int ia = i - (batch_rank - (ra - 2)), ib = i - (batch_rank - (rb - 2));
    const int64_t da = ia >= 0 ? a.shape[ia] : 1, db = ib >= 0 ? b.shape[ib] : 1;
    if (da != kUnknownDim && db != kUnknownDim && da != db && da != 1 && db != 1) {
      fail(ctx, "batch dimensions must be equal or 1 (they broadcast), got " + shapes());
    }
    // The dim other than 1 (unknown next to a 1 stays unknown; next to n > 1 it is 1 or n).
    const bool a_sets = da != 1 && da != kUnknownDim;
    out.push_back(a_sets || db == 1 ? da : db);
  }
  out.push_back(a.shape[trans_a ? ra - 1 : ra - 2]);
  out.push_back(b.shape[trans_b ? rb - 2 : rb - 1]);
  return {a.dtype, out};
}

ValueType infer_transpose(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  require_known_rank(ctx, x.shape);
  int rank = x.shape.rank();
  const auto& perm = ctx.attrs.ints;
  Shape out;
  if (perm.empty()) {
    for (int i = rank - 1; i >= 0; --i) out.push_back(x.shape[i]);
    return {x.dtype, out};
  }
  if (int(perm.size()) != rank) {
    fail(ctx, "perm has " + std::to_string(perm.size()) + " entries for a tensor of rank " +
                  std::to_string(rank));
  }
  uint32_t seen = 0;
  for (int64_t p : perm) {
    int64_t axis = normalize_axis(ctx, p, rank);
    if (seen & (1u << axis)) fail(ctx, "perm is not a permutation");
    seen |= 1u << axis;
    out.push_back(x.shape[int(axis)]);
  }
  return {x.dtype, out};
}

ValueType infer_reshape(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  const auto& dims = ctx.attrs.ints;
  int64_t known = 1;
  int inferred = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (inferred >= 0) fail(ctx, "only one dimension may be -1");
      inferred = int(i);
    } else if (dims[i] < 0) {
      fail(ctx, "dimension " + std::to_string(i) + " is negative");
    } else {
      known *= dims[i];
    }
  }
  Shape out(std::span<const int64_t>(dims.data(), dims.size()));
  int64_t n = x.shape.num_elements();
  if (n == kUnknownDim) return {x.dtype, out};
  if (inferred >= 0) {
    if (known == 0 || n % known != 0) {
      fail(ctx, "cannot reshape a tensor of " + std::to_string(n) + " elements to shape " +
                    out.to_list_string());
    }
    out.set_dim(inferred, n / known);
  } else if (known != n) {
    fail(ctx, "cannot reshape a tensor of shape " + x.shape.to_list_string() + " (" +
                  std::to_string(n) + " elements) to shape " + out.to_list_string());
  }
  return {x.dtype, out};
}

// The target shape must be fully defined; x's dims, aligned from the last,
// must each be 1 or the target's (an unknown dim is checked when it runs).
ValueType infer_broadcast_to(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  require_known_rank(ctx, x.shape);
  const auto& dims = ctx.attrs.ints;
  if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; }))
    fail(ctx, "the shape must be fully defined");
  const Shape target(std::span<const int64_t>(dims.data(), dims.size()));
  if (!broadcasts_to(x.shape, target)) {
    fail(ctx, "cannot broadcast a tensor of shape " + x.shape.to_list_string() + " to shape " +
                  target.to_list_string() +
                  " (each dim, aligned from the last, must be 1 or the target's)");
  }
  return {x.dtype, target};
}

ValueType infer_expand_dims(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  require_known_rank(ctx, x.shape);
  int64_t axis = normalize_axis(ctx, ctx.attrs.axis, x.shape.rank() + 1);
  Shape out;
  for (int i = 0; i <= x.shape.rank(); ++i) {
    if (i == axis) out.push_back(1);
    if (i < x.shape.rank()) out.push_back(x.shape[i]);
  }
  return {x.dtype, out};
}

ValueType infer_squeeze(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  require_known_rank(ctx, x.shape);
  int rank = x.shape.rank();
  uint32_t mask = 0;
  for (int64_t a : ctx.attrs.ints) {
    int64_t axis = normalize_axis(ctx, a, rank);
    if (x.shape[int(axis)] != 1 && x.shape[int(axis)] != kUnknownDim) {
      fail(ctx, "cannot squeeze dim " + std::to_string(a) + ", expected a dimension of 1, got " +
                    std::to_string(x.shape[int(axis)]));
    }
    mask |= 1u << axis;
  }
  Shape out;
  for (int i = 0; i < rank; ++i) {
    bool drop = ctx.attrs.ints.empty() ? x.shape[i] == 1 : (mask & (1u << i)) != 0;
    if (!drop) out.push_back(x.shape[i]);
  }
  return {x.dtype, out};
}

ValueType infer_concat(const InferContext& ctx) {
  if (ctx.inputs.empty()) fail(ctx, "needs at least one tensor");
  const ValueType& first = ctx.inputs[0];
  require_known_rank(ctx, first.shape);
  int rank = first.shape.rank();
  if (rank == 0) fail(ctx, "cannot concatenate scalars; use stack");
  int64_t axis = normalize_axis(ctx, ctx.attrs.axis, rank);
  Shape out = first.shape;
  for (size_t k = 1; k < ctx.inputs.size(); ++k) {
    const ValueType& t = ctx.inputs[k];
    if (t.dtype != first.dtype) fail(ctx, "inputs have different dtypes");
    if (t.shape.rank() != rank) {
      fail(ctx, "ranks of all inputs should match: shape[0] = " + first.shape.to_list_string() +
                    " vs. shape[" + std::to_string(k) + "] = " + t.shape.to_list_string());
    }
    for (int i = 0; i < rank; ++i) {
      int64_t d = t.shape[i];
      if (i == axis) {
        out.set_dim(i, out[i] == kUnknownDim || d == kUnknownDim ? kUnknownDim : out[i] + d);
      } else if (out[i] != kUnknownDim && d != kUnknownDim && out[i] != d) {
        fail(ctx, "dimensions of inputs should match: shape[0] = " + first.shape.to_list_string() +
                      " vs. shape[" + std::to_string(k) + "] = " + t.shape.to_list_string());
      } else if (out[i] == kUnknownDim) {
        out.set_dim(i, d);
      }
    }
  }
  return {first.dtype, out};
}

ValueType infer_stack(const InferContext& ctx) {
  if (ctx.inputs.empty()) fail(ctx, "needs at least one tensor");
  const ValueType& first = ctx.inputs[0];
  require_known_rank(ctx, first.shape);
  for (size_t k = 1; k < ctx.inputs.size(); ++k) {
    const ValueType& t = ctx.inputs[k];
    if (t.dtype != first.dtype) fail(ctx, "inputs have different dtypes");
    if (!t.shape.is_compatible_with(first.shape)) {
      fail(ctx,
           "shapes of all inputs must match: values[0].shape = " + first.shape.to_list_string() +
               " != values[" + std::to_string(k) + "].shape = " + t.shape.to_list_string());
    }
  }
  int rank = first.shape.rank();
  int64_t axis = normalize_axis(ctx, ctx.attrs.axis, rank + 1);
  Shape out;
  for (int i = 0; i <= rank; ++i) {
    if (i == axis) out.push_back(int64_t(ctx.inputs.size()));
    if (i < rank) out.push_back(first.shape[i]);
  }
  return {first.dtype, out};
}

ValueType infer_gather(const InferContext& ctx) {
  const ValueType& params = ctx.inputs[0];
  const ValueType& indices = ctx.inputs[1];
  require_known_rank(ctx, params.shape);
  require_known_rank(ctx, indices.shape);
  if (!is_integer(indices.dtype))
    fail(ctx, "indices must be int32 or int64, got " + std::string(dtype_name(indices.dtype)));
  if (params.shape.rank() == 0) fail(ctx, "params must be at least 1-D");
  int64_t axis = normalize_axis(ctx, ctx.attrs.axis, params.shape.rank());
  Shape out;
  for (int i = 0; i < axis; ++i) out.push_back(params.shape[i]);
  for (int64_t d : indices.shape) out.push_back(d);
  for (int i = int(axis) + 1; i < params.shape.rank(); ++i) out.push_back(params.shape[i]);
  return {params.dtype, out};
}

// [num_segments] + data's dims after segment_ids' rank; data's leading dims
// must be segment_ids' shape. num_segments is read where its value is known
// (eagerly, a constant while tracing, when the graph runs), else unknown.
ValueType infer_unsorted_segment_sum(const InferContext& ctx) {
  const ValueType& data = ctx.inputs[0];
  const ValueType& ids = ctx.inputs[1];
  const ValueType& count = ctx.inputs[2];
  require_known_rank(ctx, data.shape);
  require_known_rank(ctx, ids.shape);
  require_dtype(ctx, data.dtype != DType::bool_, data.dtype);
  if (!is_integer(ids.dtype))
    fail(ctx, "segment_ids must be int32 or int64, got " + std::string(dtype_name(ids.dtype)));
  if (!is_integer(count.dtype) || count.shape.rank() != 0) {
    fail(ctx, "num_segments must be an int32 or int64 scalar, got " +
                  std::string(dtype_name(count.dtype)) + " of shape " +
                  count.shape.to_list_string());
  }
  const int r = ids.shape.rank();
  bool leading_match = r <= data.shape.rank();
  for (int d = 0; leading_match && d < r; ++d) {
    int64_t want = ids.shape[d], have = data.shape[d];
    leading_match = want == kUnknownDim || have == kUnknownDim || want == have;
  }
  if (!leading_match) {
    fail(ctx, "segment_ids of shape " + ids.shape.to_list_string() +
                  " must be a prefix of data's shape " + data.shape.to_list_string());
  }
  int64_t segments = kUnknownDim;
  if (!ctx.values.empty() && ctx.values[2]) {
    segments = visit_dtype(count.dtype, [&](auto v) -> int64_t {
      using T = decltype(v);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        return int64_t(static_cast<const T*>(ctx.values[2])[0]);
      } else {
        return kUnknownDim;
      }
    });
    if (segments < 0)
      fail(ctx, "num_segments must be non-negative, got " + std::to_string(segments));
  }
  Shape out;
  out.push_back(segments);
  for (int d = r; d < data.shape.rank(); ++d) out.push_back(data.shape[d]);
  return {data.dtype, out};
}

ValueType infer_slice(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  require_known_rank(ctx, x.shape);
  int rank = x.shape.rank();
  const auto& ints = ctx.attrs.ints;
  if (int(ints.size()) != 2 * rank) {
    fail(ctx, "begin and size must each have " + std::to_string(rank) +
                  " entries for a tensor of shape " + x.shape.to_list_string());
  }
  Shape out;
  for (int i = 0; i < rank; ++i) {
    int64_t begin = ints[size_t(i)], size = ints[size_t(i + rank)];
    int64_t dim = x.shape[i];
    if (begin < 0 || size < -1) fail(ctx, "begin and size must be non-negative (size may be -1)");
    if (dim == kUnknownDim) {
      out.push_back(size == -1 ? kUnknownDim : size);
      continue;
    }
    if (size == -1) size = dim - begin;
    if (begin > dim || begin + size > dim) {
      fail(ctx, "expected begin[" + std::to_string(i) + "] + size[" + std::to_string(i) +
                    "] <= " + std::to_string(dim) + ", got begin " + std::to_string(begin) +
                    " and size " + std::to_string(size));
    }
    out.push_back(size);
  }
  return {x.dtype, out};
}

// Inputs indices, on_value, off_value (scalars of the output dtype);
// attrs.ints = {depth}, attrs.axis where the new axis goes (-1: last).
ValueType infer_one_hot(const InferContext& ctx) {
  const ValueType& indices = ctx.inputs[0];
  const ValueType& on = ctx.inputs[1];
  const ValueType& off = ctx.inputs[2];
  require_known_rank(ctx, indices.shape);
  if (!is_integer(indices.dtype))
    fail(ctx, "indices must be int32 or int64, got " + std::string(dtype_name(indices.dtype)));
  if (on.shape.rank() != 0 || off.shape.rank() != 0) {
    fail(ctx, "on_value and off_value must be scalars, got shapes " + on.shape.to_list_string() +
                  " and " + off.shape.to_list_string());
  }
  if (on.dtype != off.dtype) {
    fail(ctx, "on_value and off_value must have the same dtype, got " +
                  std::string(dtype_name(on.dtype)) + " and " + std::string(dtype_name(off.dtype)));
  }
  if (ctx.attrs.ints.size() != 1) fail(ctx, "needs a depth");
  int64_t depth = ctx.attrs.ints[0];
  if (depth < 0) fail(ctx, "depth must be non-negative, got " + std::to_string(depth));
  int rank = indices.shape.rank();
  int64_t axis = ctx.attrs.axis;
  if (axis < -1 || axis > rank) {
    fail(ctx, "axis " + std::to_string(axis) + " is out of range for indices of rank " +
                  std::to_string(rank) + "; expected -1 or a value in [0, " + std::to_string(rank) +
                  "]");
  }
  if (axis == -1) axis = rank;
  Shape out;
  for (int i = 0; i <= rank; ++i) {
    if (i == axis) out.push_back(depth);
    if (i < rank) out.push_back(indices.shape[i]);
  }
  return {on.dtype, out};
}

// shape and size: attrs.dtype is the output type (TensorFlow's out_type).
static DType shape_out_type(const InferContext& ctx) {
  if (ctx.attrs.dtype != DType::int32 && ctx.attrs.dtype != DType::int64) {
    require_valid_dtype(ctx, ctx.attrs.dtype);
    fail(ctx, "out_type must be int32 or int64, got " + std::string(dtype_name(ctx.attrs.dtype)));
  }
  return ctx.attrs.dtype;
}

// shape, size and rank take any dtype and shape; an unknown rank leaves
// shape's length unknown.
ValueType infer_shape(const InferContext& ctx) {
  const Shape& s = ctx.inputs[0].shape;
  return {shape_out_type(ctx), Shape{s.has_unknown_rank() ? kUnknownDim : int64_t(s.rank())}};
}

ValueType infer_size(const InferContext& ctx) {
  return {shape_out_type(ctx), Shape{}};
}

ValueType infer_rank(const InferContext&) {
  return {DType::int32, Shape{}};
}

ValueType infer_range(const InferContext& ctx) {
  for (const ValueType& t : ctx.inputs) {
    if (t.shape.rank() != 0)
      fail(ctx, "start, limit and delta must be scalars, got shape " + t.shape.to_string());
    require_dtype(ctx, t.dtype != DType::bool_, t.dtype);
  }
  DType dtype = ctx.inputs[0].dtype;
  if (ctx.values.empty() || !ctx.values[0] || !ctx.values[1] || !ctx.values[2]) {
    return {dtype, Shape{kUnknownDim}};
  }
  // TensorFlow's length rule, computed in the dtype itself.
  int64_t length = visit_dtype(dtype, [&](auto v) -> int64_t {
    using T = decltype(v);
    auto read = [&](int i) { return static_cast<const T*>(ctx.values[size_t(i)])[0]; };
    const T start = read(0), limit = read(1), delta = read(2);
    if (delta == T(0)) fail(ctx, "delta must not be zero");
    if ((delta > T(0) && limit <= start) || (delta < T(0) && limit >= start)) return 0;
    if constexpr (std::is_floating_point_v<T>) {
      return int64_t(std::ceil(std::abs((limit - start) / delta)));
    } else {
      // Unsigned, so that a span like INT64_MAX - INT64_MIN cannot overflow.
      uint64_t span =
          delta > T(0) ? uint64_t(limit) - uint64_t(start) : uint64_t(start) - uint64_t(limit);
      uint64_t step = delta > T(0) ? uint64_t(delta) : uint64_t(0) - uint64_t(delta);
      return int64_t(span / step + (span % step != 0));
    }
  });
  return {dtype, Shape{length}};
}

ValueType infer_zeros(const InferContext& ctx) {
  require_valid_dtype(ctx, ctx.attrs.dtype);
  const auto& dims = ctx.attrs.ints;
  if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; }))
    fail(ctx, "the shape must be fully defined");
  return {ctx.attrs.dtype, Shape(std::span<const int64_t>(dims.data(), dims.size()))};
}

ValueType infer_random(const InferContext& ctx) {
  const auto& dims = ctx.attrs.ints;
  require_valid_dtype(ctx, ctx.attrs.dtype);
  bool ok = ctx.attrs.dtype != DType::bool_;
  if (ctx.op_name == "random_normal") ok = is_floating(ctx.attrs.dtype);
  require_dtype(ctx, ok, ctx.attrs.dtype);
  if (is_integer(ctx.attrs.dtype) && !(int64_t(ctx.attrs.lo) < int64_t(ctx.attrs.hi))) {
    fail(ctx, "Need minval < maxval: " + std::to_string(int64_t(ctx.attrs.lo)) +
                  " >= " + std::to_string(int64_t(ctx.attrs.hi)));
  }
  return {ctx.attrs.dtype, Shape(std::span<const int64_t>(dims.data(), dims.size()))};
}

// ---- String ops (docs/strings.md) ------------------------------------------

namespace {

void require_strings(const InferContext& ctx, const ValueType& t, const char* what) {
  if (t.dtype != DType::string) {
    fail(ctx, std::string(what) + " must be a string tensor, got " +
                  std::string(dtype_name(t.dtype)) +
                  "; convert numbers with ag::strings::as_string first");
  }
}

void require_scalar_string(const InferContext& ctx, const ValueType& t, const char* what) {
  require_strings(ctx, t, what);
  if (t.shape.has_unknown_rank() || t.shape.rank() != 0)
    fail(ctx, std::string(what) + " must be a scalar, got shape " + t.shape.to_string());
}

}  // namespace

ValueType infer_string_binary(const InferContext& ctx) {
  require_strings(ctx, ctx.inputs[0], "the first operand");
  require_strings(ctx, ctx.inputs[1], "the second operand");
  return {DType::string, broadcast_shapes(ctx.inputs[0].shape, ctx.inputs[1].shape)};
}

ValueType infer_string_compare(const InferContext& ctx) {
  return {DType::bool_, infer_string_binary(ctx).shape};
}

ValueType infer_string_length(const InferContext& ctx) {
  require_strings(ctx, ctx.inputs[0], "the input");
  return {DType::int32, ctx.inputs[0].shape};
}

ValueType infer_substr(const InferContext& ctx) {
  const ValueType& input = ctx.inputs[0];
  const ValueType& pos = ctx.inputs[1];
  const ValueType& len = ctx.inputs[2];
  require_strings(ctx, input, "the input");
  for (const ValueType* t : {&pos, &len}) {
    if (t->dtype != DType::int32 && t->dtype != DType::int64) {
      fail(ctx, std::string(t == &pos ? "pos" : "len") + " has unsupported dtype " +
                    std::string(dtype_name(t->dtype)) +
                    "; it takes int32 or int64, as tf.strings.substr (ag::cast it)");
    }
  }
  if (!pos.shape.is_compatible_with(len.shape)) {
    fail(ctx, "pos and len must have the same shape, got " + pos.shape.to_string() + " and " +
                  len.shape.to_string() + "; give one len for each pos, as tf.strings.substr does");
  }
  try {
    return {DType::string, broadcast_shapes(input.shape, pos.shape)};
  } catch (const InvalidArgumentError&) {
    fail(ctx, "pos and len of shape " + pos.shape.to_string() +
                  " do not broadcast against the input of shape " + input.shape.to_string() +
                  "; give them the input's shape, a shape that broadcasts, or pass scalars");
  }
}

ValueType infer_as_string(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  if (x.dtype == DType::string) fail(ctx, "the input is a string tensor already");
  return {DType::string, x.shape};
}

ValueType infer_string_to_number(const InferContext& ctx) {
  require_strings(ctx, ctx.inputs[0], "the input");
  const DType out = ctx.attrs.dtype;
  if (out != DType::float32 && out != DType::float64 && out != DType::int32 &&
      out != DType::int64) {
    fail(ctx, "out_type must be float32, float64, int32 or int64, got " +
                  std::string(uint8_t(out) < kNumDTypes ? dtype_name(out) : "?") +
                  "; read float64 and ag::cast the result");
  }
  return {out, ctx.inputs[0].shape};
}

ValueType infer_string_split(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  require_strings(ctx, x, "the input");
  require_scalar_string(ctx, ctx.inputs[1], "sep");
  if (x.shape.has_unknown_rank() || x.shape.rank() > 1) {
    fail(ctx, "takes a scalar or 1-D input (one string or a vector of them), got shape " +
                  x.shape.to_string() + "; reshape it to 1-D first");
  }
  // The widest row sets the padded width: known only from the values.
  int64_t width = kUnknownDim;
  if (!ctx.values.empty() && ctx.values[0] && ctx.values[1]) {
    width = string_split_width(static_cast<const detail::StringHandle*>(ctx.values[0]),
                               x.shape.num_elements(),
                               *static_cast<const detail::StringHandle*>(ctx.values[1]));
  }
  if (x.shape.rank() == 0) return {DType::string, Shape{width}};
  return {DType::string, Shape{x.shape[0], width}};
}

ValueType infer_reduce_join(const InferContext& ctx) {
  require_strings(ctx, ctx.inputs[0], "the input");
  require_scalar_string(ctx, ctx.inputs[1], "separator");
  return infer_reduce(ctx);
}

}  // namespace ag::ops
