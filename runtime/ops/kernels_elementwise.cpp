// Elementwise kernels, compiled once per instruction set (ops/isa.h). Each op's arithmetic is one
// functor in ops/scalar_ops.h, named by its AG_ELEMENTWISE_OP line in ops.def, which defines its
// kernel and its scalar kernel here; the loops that apply it (same shape, scalar operand, general
// broadcast) are shared. Inner loops are plain indexed loops that the compiler vectorises; the
// same-shape and scalar-operand loops split large tensors over the intra-op threads.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ag/error.h"
#include "ops/broadcast.h"
#include "ops/cast_storage.h"
#include "ops/isa.h"
#include "ops/kernel_tables.h"
#include "ops/kernels.h"
#include "ops/parallel.h"
#include "ops/scalar_ops.h"

AG_ISA_BEGIN
namespace ag::ops::AG_ISA_NS {

using namespace scalar;

namespace {

// ---- Loops ------------------------------------------------------------------

template <class In, class Out, class F>
void unary_loop(const KernelContext& ctx, F f) {
  const In* x = static_cast<const In*>(ctx.inputs[0].data);
  Out* out = static_cast<Out*>(ctx.out);
  if (ctx.out_shape->rank() == 0) {  // scalars (loop counters, conditions): no loop setup
    *out = f(*x);
    return;
  }
  parallel_for(ctx.out_shape->num_elements(), kParallelGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = f(x[i]);
  });
}

// Whether `in` is the output's trailing dims, broadcast along its leading
// dims only, as a bias or a per-channel scale is.
bool is_trailing_row(const Shape& in, const Shape& out) {
  int first = 0;
  while (first < in.rank() && in[first] == 1) ++first;
  const int kept = in.rank() - first, skipped = out.rank() - kept;
  if (kept == 0 || skipped < 0) return false;
  for (int i = 0; i < kept; ++i)
    if (in[first + i] != out[skipped + i]) return false;
  return true;
}

// out[i] = f(full[i], row[i % len]), or f(row[...], full[i]) with
// kRowFirst. A short row (a bias of six channels) is repeated into a tile
// of at least kTile / 2 elements, so the inner loop stays long enough to
// vectorise; the general broadcast walk ran it a row of six at a time.
template <bool kRowFirst, class In, class Out, class F>
void row_broadcast_loop(const In* full, const In* row, int64_t len, int64_t n, Out* out, F f) {
  constexpr int64_t kTile = 256;
  In tile[kTile];
  const In* pattern = row;
  int64_t span = len;
  if (2 * len <= kTile) {
    span = kTile / len * len;
    for (int64_t j = 0; j < span; ++j) tile[j] = row[j % len];
    pattern = tile;
  }
  const int64_t blocks = (n + span - 1) / span;
  parallel_for(blocks, std::max<int64_t>(1, kParallelGrain / span),
               [&](int64_t begin, int64_t end) {
                 for (int64_t block = begin; block < end; ++block) {
                   const int64_t start = block * span, m = std::min(span, n - start);
                   const In* x = full + start;
                   Out* o = out + start;
                   for (int64_t j = 0; j < m; ++j)
                     o[j] = kRowFirst ? f(pattern[j], x[j]) : f(x[j], pattern[j]);
                 }
               });
}

template <class In, class Out, class F>
void binary_loop(const KernelContext& ctx, F f) {
  const In* a = static_cast<const In*>(ctx.inputs[0].data);
  const In* b = static_cast<const In*>(ctx.inputs[1].data);
  Out* out = static_cast<Out*>(ctx.out);
  const Shape& os = *ctx.out_shape;
  if (os.rank() == 0) {  // two scalars (loop counters, conditions): no loop setup
    *out = f(*a, *b);
    return;
  }
  int64_t n = os.num_elements();
  int64_t na = ctx.inputs[0].shape->num_elements();
  int64_t nb = ctx.inputs[1].shape->num_elements();
  if (ctx.inputs[0].run > 0 || ctx.inputs[1].run > 0) {
    // Strided inputs (KernelInput::run) of the output's shape and one run
    // length, run by run; a contiguous input, and the output unless
    // ctx.out_stride says otherwise, have their runs back to back.
    const int64_t run = std::max(ctx.inputs[0].run, ctx.inputs[1].run);
    const int64_t sa = ctx.inputs[0].run > 0 ? ctx.inputs[0].stride : run;
    const int64_t sb = ctx.inputs[1].run > 0 ? ctx.inputs[1].stride : run;
    const int64_t so = ctx.out_stride > 0 ? ctx.out_stride : run;
    for (int64_t r = 0; r * run < n; ++r) {
      const In* ar = a + r * sa;
      const In* br = b + r * sb;
      Out* o = out + r * so;
      for (int64_t j = 0; j < run; ++j) o[j] = f(ar[j], br[j]);
    }
  } else if (na == n && nb == n) {
    parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(a[i], b[i]);
    });
  } else if (nb == 1 && na == n) {
    const In s = b[0];
    parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(a[i], s);
    });
  } else if (na == 1 && nb == n) {
    const In s = a[0];
    parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(s, b[i]);
    });
  } else if (na == n && is_trailing_row(*ctx.inputs[1].shape, os)) {
    row_broadcast_loop<false>(a, b, nb, n, out, f);
  } else if (nb == n && is_trailing_row(*ctx.inputs[0].shape, os)) {
    row_broadcast_loop<true>(b, a, na, n, out, f);
  } else {
    BroadcastIndexer<2> idx(os, {ctx.inputs[0].shape, ctx.inputs[1].shape});
    idx.for_each_row([&](int64_t o, const int64_t* in, const int64_t* step, int64_t len) {
      for (int64_t j = 0; j < len; ++j)
        out[o + j] = f(a[in[0] + j * step[0]], b[in[1] + j * step[1]]);
    });
  }
}

// t and its bounds (clip_by_value): the bounds are usually scalars.
template <class T, class F>
void ternary_loop(const KernelContext& ctx, F f) {
  const T* a = static_cast<const T*>(ctx.inputs[0].data);
  const T* b = static_cast<const T*>(ctx.inputs[1].data);
  const T* c = static_cast<const T*>(ctx.inputs[2].data);
  T* out = static_cast<T*>(ctx.out);
  const Shape& os = *ctx.out_shape;
  int64_t n = os.num_elements();
  int64_t na = ctx.inputs[0].shape->num_elements();
  int64_t nb = ctx.inputs[1].shape->num_elements();
  int64_t nc = ctx.inputs[2].shape->num_elements();
  if (na == n && nb == 1 && nc == 1) {
    const T sb = b[0], sc = c[0];
    parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(a[i], sb, sc);
    });
  } else if (na == n && nb == n && nc == n) {
    parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(a[i], b[i], c[i]);
    });
  } else {
    BroadcastIndexer<3> idx(os, {ctx.inputs[0].shape, ctx.inputs[1].shape, ctx.inputs[2].shape});
    idx.for_each_row([&](int64_t o, const int64_t* in, const int64_t* step, int64_t len) {
      for (int64_t j = 0; j < len; ++j) {
        out[o + j] = f(a[in[0] + j * step[0]], b[in[1] + j * step[1]], c[in[2] + j * step[2]]);
      }
    });
  }
}

template <class Op>
void ternary_dispatch(const KernelContext& ctx, Op op) {
  visit_dtype(ctx.inputs[0].dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (Op::template supports<T>) {
      ternary_loop<T>(ctx, [&](T a, T b, T c) { return op(a, b, c); });
    } else {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    }
  });
}

// Dispatches on the input dtype; the output type is the functor's result
// type. `Op::supports` rejects types the op has no meaning for (infer already
// rejected them, so reaching here is a bug).
template <class Op>
void binary_dispatch(const KernelContext& ctx, Op op) {
  visit_dtype(ctx.inputs[0].dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (Op::template supports<T>) {
      binary_loop<T, std::invoke_result_t<Op, T, T>>(ctx, [&](T a, T b) { return op(a, b); });
    } else {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    }
  });
}

template <class Op>
void unary_dispatch(const KernelContext& ctx, Op op) {
  if constexpr (std::is_same_v<Op, IdentityOp>) {
    if (ctx.inputs[0].dtype == DType::string) {  // handles, copied as they are
      const size_t bytes = size_t(ctx.out_shape->num_elements()) * dtype_size(DType::string);
      if (bytes > 0) std::memcpy(ctx.out, ctx.inputs[0].data, bytes);
      return;
    }
  }
  visit_dtype(ctx.inputs[0].dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (Op::template supports<T>) {
      unary_loop<T, std::invoke_result_t<Op, T>>(ctx, [&](T x) { return op(x); });
    } else {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    }
  });
}

}  // namespace

// ---- Kernels ------------------------------------------------------------------

// Integer floordiv and mod by a scalar power of two (x // 2, x % 2): an
// arithmetic shift and a mask give exactly the floor semantics of FloorDivOp
// and ModOp in two's complement, without a division per element. Returns
// false when the fast path does not apply.
template <bool kMod>
bool power_of_two_divisor(const KernelContext& ctx) {
  if (ctx.inputs[1].shape->rank() != 0 || ctx.out_shape->rank() == 0) return false;
  bool done = false;
  visit_dtype(ctx.inputs[0].dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const T b = *static_cast<const T*>(ctx.inputs[1].data);
      if (b <= 0 || (b & (b - 1)) != 0) return;
      const T* a = static_cast<const T*>(ctx.inputs[0].data);
      T* out = static_cast<T*>(ctx.out);
      int64_t n = ctx.out_shape->num_elements();
      if (ctx.inputs[0].shape->num_elements() != n) return;
      if constexpr (kMod) {
        const T mask = T(b - 1);
        for (int64_t i = 0; i < n; ++i) out[i] = T(a[i] & mask);
      } else {
        int shift = 0;
        while ((T(1) << shift) != b) ++shift;
        for (int64_t i = 0; i < n; ++i) out[i] = T(a[i] >> shift);
      }
      done = true;
    }
  });
  return done;
}

template <int kArity, class Op>
void elementwise_kernel(const KernelContext& ctx) {
  if constexpr (kArity == 1) {
    unary_dispatch(ctx, Op{});
  } else if constexpr (kArity == 3) {
    ternary_dispatch(ctx, Op{});
  } else {
    if constexpr (std::is_same_v<Op, FloorDivOp> || std::is_same_v<Op, ModOp>) {
      if (power_of_two_divisor<std::is_same_v<Op, ModOp>>(ctx)) return;
    }
    binary_dispatch(ctx, Op{});
  }
}

// The kernel of every AG_ELEMENTWISE_OP of ops.def.
#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx)
#define AG_ELEMENTWISE_OP(id, name, arity, infer, kernel, functor, gradient, onnx, api) \
  void kernel(const KernelContext& ctx) {                                               \
    elementwise_kernel<arity, functor>(ctx);                                            \
  }
#include "ag/ops.def"
#undef AG_ELEMENTWISE_OP
#undef AG_OP

// cast's element conversion: to bool is "not zero", as in TensorFlow.
template <class Out>
struct CastTo {
  template <class In>
  Out operator()(In x) const {
    if constexpr (std::is_same_v<Out, bool>) {
      return x != In(0);
    } else {
      return Out(x);
    }
  }
};

// A cast that widens uint64 for an op which reads its values' magnitude
// (ops::apply) carries that op's id: the op is exact below 2^63 only, so a
// value above is an error, not a negative int64.
void check_below_2_63(const KernelContext& ctx) {
  const auto* in = ctx.input_data<uint64_t>(0);
  const int64_t n = ctx.out_shape->num_elements();
  for (int64_t i = 0; i < n; ++i) {
    if (in[i] <= uint64_t(INT64_MAX)) continue;
    const std::string_view op = op_def(OpId(ctx.attrs->ints[0])).name;
    throw InvalidArgumentError(
        std::string(ctx.op_name) + ": uint64 value " + std::to_string(in[i]) + " (element " +
        std::to_string(i) + ") is 2^63 or more, which " + std::string(op) +
        " cannot take: it computes uint64 on int64, exactly below 2^63 only. Only +, -, *, "
        "comparisons, minimum/maximum, sorting, bitwise ops and moves take every uint64 value; "
        "keep the operands of " +
        std::string(op) + " below 2^63");
  }
}

void kernel_cast(const KernelContext& ctx) {
  if (ctx.inputs[0].dtype == DType::uint64 && !ctx.attrs->ints.empty()) check_below_2_63(ctx);
  if (!is_compute_dtype(ctx.inputs[0].dtype) || !is_compute_dtype(ctx.out_dtype)) {
    cast_storage(ctx.inputs[0].data, ctx.inputs[0].dtype, ctx.out, ctx.out_dtype,
                 ctx.out_shape->num_elements());
    return;
  }
  visit_dtype(ctx.inputs[0].dtype, [&](auto in) {
    using In = decltype(in);
    visit_dtype(ctx.out_dtype,
                [&](auto out) { unary_loop<In, decltype(out)>(ctx, CastTo<decltype(out)>{}); });
  });
}

// ---- Ternary ----------------------------------------------------------------

void kernel_where(const KernelContext& ctx) {
  // String elements are 8-byte handles, chosen as int64's bits are.
  visit_dtype(ctx.out_dtype == DType::string ? DType::int64 : ctx.out_dtype, [&](auto v) {
    using T = decltype(v);
    const bool* c = static_cast<const bool*>(ctx.inputs[0].data);
    const T* x = static_cast<const T*>(ctx.inputs[1].data);
    const T* y = static_cast<const T*>(ctx.inputs[2].data);
    T* out = static_cast<T*>(ctx.out);
    // No broadcasting (the usual case): a plain loop the compiler turns into
    // blends. It must load both values on every element, and read the
    // condition as bytes (a bool is 0 or 1): otherwise GCC does not
    // vectorise it and branches per element, mispredicted on mixed
    // conditions.
    int64_t n = ctx.out_shape->num_elements();
    if (ctx.inputs[0].shape->num_elements() == n && ctx.inputs[1].shape->num_elements() == n &&
        ctx.inputs[2].shape->num_elements() == n) {
      const auto* flags = static_cast<const unsigned char*>(ctx.inputs[0].data);
      parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const T a = x[i], b = y[i];
          out[i] = flags[i] != 0 ? a : b;
        }
      });
      return;
    }
    BroadcastIndexer<3> idx(*ctx.out_shape,
                            {ctx.inputs[0].shape, ctx.inputs[1].shape, ctx.inputs[2].shape});
    idx.for_each_row([&](int64_t o, const int64_t* in, const int64_t* step, int64_t len) {
      for (int64_t j = 0; j < len; ++j) {
        out[o + j] = c[in[0] + j * step[0]] ? x[in[1] + j * step[1]] : y[in[2] + j * step[2]];
      }
    });
  });
}

// ---- Scalar and flat kernels ----------------------------------------------------

namespace {

// where's and cast's element functions (the elementwise ops' are their
// functors).
struct Select {
  template <class T>
  T operator()(bool c, T x, T y) const {
    return c ? x : y;
  }
};

template <size_t, class T>
using Repeat = T;

// f on the rank-0 inputs in[0], ..., in[I...] of types In....
template <class Out, class... In, size_t... I, class F>
void apply_scalar(std::index_sequence<I...>, const void* const* in, void* out, F f) {
  *static_cast<Out*>(out) = scalar::call_one(f, *static_cast<const In*>(in[I])...);
}

// f on n elements, as FlatKernelFn describes. With every input contiguous
// (the usual case) the loop indexes arrays, which the compiler vectorises.
template <class Out, class... In, size_t... I, class F>
void apply_flat(std::index_sequence<I...>, const void* const* in, const uint32_t* strides,
                int32_t n, void* out, F f) {
  Out* o = static_cast<Out*>(out);
  if (((strides[I] == sizeof(In)) && ...)) {
    // The pointers in locals: stores through o (a bool, say) could otherwise
    // alias the pointer array, reloaded per element.
    const std::tuple<const In*...> x{static_cast<const In*>(in[I])...};
    for (int32_t e = 0; e < n; ++e) o[e] = scalar::call_one(f, std::get<I>(x)[e]...);
    return;
  }
  const std::array<const char*, sizeof...(I)> at{static_cast<const char*>(in[I])...};
  const std::array<uint32_t, sizeof...(I)> stride{strides[I]...};
  for (int32_t e = 0; e < n; ++e) {
    o[e] = scalar::call_one(f, *reinterpret_cast<const In*>(at[I] + size_t(e) * stride[I])...);
  }
}

// The scalar and flat kernels of f on inputs of types In... .
template <class F, class... In>
struct ElementKernels {
  using Out = std::invoke_result_t<F, In...>;
  using Indices = std::index_sequence_for<In...>;
  static constexpr size_t arity = sizeof...(In);
  static void scalar(const void* const* in, void* out) {
    apply_scalar<Out, In...>(Indices{}, in, out, F{});
  }
  static void binary(const void* a, const void* b, void* out) {  // (arity 2 only)
    const void* const in[] = {a, b};
    apply_scalar<Out, In...>(Indices{}, in, out, F{});
  }
  static void flat(const void* const* in, const uint32_t* strides, int32_t n, void* out) {
    apply_flat<Out, In...>(Indices{}, in, strides, n, out, F{});
  }
};

// Calls pick.template operator()<ElementKernels<...>>() for the op and
// dtypes, or returns null when the op has no element kernel for them.
template <class Fn, class Pick>
Fn element_kernel(OpId id, DType input_dtype, DType output_dtype, Pick pick) {
  if (input_dtype == DType::string || output_dtype == DType::string) return nullptr;
  switch (id) {
#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx)
#define AG_ELEMENTWISE_OP(id, name, arity, infer, kernel, functor, gradient, onnx, api) \
  case OpId::id:                                                                        \
    return visit_dtype(input_dtype, [&](auto v) -> Fn {                                 \
      using T = decltype(v);                                                            \
      if constexpr (functor::template supports<T>) {                                    \
        return [&]<size_t... I>(std::index_sequence<I...>) {                            \
          return pick.template operator()<ElementKernels<functor, Repeat<I, T>...>>();  \
        }(std::make_index_sequence<arity>{});                                           \
      } else {                                                                          \
        return nullptr;                                                                 \
      }                                                                                 \
    });
#include "ag/ops.def"
#undef AG_ELEMENTWISE_OP
#undef AG_OP
    case OpId::Cast:
      if (!is_compute_dtype(input_dtype) || !is_compute_dtype(output_dtype)) return nullptr;
      return visit_dtype(input_dtype, [&](auto in) {
        return visit_dtype(output_dtype, [&](auto out) -> Fn {
          return pick.template operator()<ElementKernels<CastTo<decltype(out)>, decltype(in)>>();
        });
      });
    case OpId::Where:
      return visit_dtype(output_dtype, [&](auto v) -> Fn {
        using T = decltype(v);
        return pick.template operator()<ElementKernels<Select, bool, T, T>>();
      });
    default:
      return nullptr;
  }
}

}  // namespace

ScalarKernelFn scalar_kernel(OpId id, DType input_dtype, DType output_dtype) {
  return element_kernel<ScalarKernelFn>(id, input_dtype, output_dtype,
                                        []<class K>() { return &K::scalar; });
}

BinaryScalarKernelFn binary_scalar_kernel(OpId id, DType input_dtype, DType output_dtype) {
  return element_kernel<BinaryScalarKernelFn>(id, input_dtype, output_dtype,
                                              []<class K>() -> BinaryScalarKernelFn {
                                                if constexpr (K::arity == 2) return &K::binary;
                                                return nullptr;
                                              });
}

namespace {

// An int32 mod or floordiv by a constant divisor d without a division
// (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019),
// with the magic number ceil(2^64 / |d|): |a| mod |d| is the high half of
// the low 64 bits of |a| * magic, times |d|, and |a| / |d| (truncated) the
// high half of |a| * magic; then a's and d's signs and the ops' floor rules.
// Exact for every 32-bit |a| and |d| >= 1 (|d| = 1: the magic number wraps
// to 0, and so do the remainders, as ModOp's are; not the quotients, so a
// floordiv by 1 or -1 keeps its binary kernel).
struct Int32Divisor {
  uint64_t magic;  // ceil(2^64 / |d|), modulo 2^64
  uint32_t magnitude;
  int32_t divisor;
};

uint32_t magnitude(int32_t x) {
  return x < 0 ? 0u - uint32_t(x) : uint32_t(x);
}

void mod_int32_by_constant(const void* a, const void* b, void* out) {
  __extension__ using uint128 = unsigned __int128;
  Int32Divisor d;
  std::memcpy(&d, b, sizeof d);
  const int32_t x = *static_cast<const int32_t*>(a);
  const uint64_t low = d.magic * magnitude(x);
  const auto r = int32_t(uint64_t((uint128(low) * d.magnitude) >> 64));
  *static_cast<int32_t*>(out) = scalar::floor_remainder(x < 0 ? -r : r, d.divisor);
}

void floordiv_int32_by_constant(const void* a, const void* b, void* out) {
  __extension__ using uint128 = unsigned __int128;
  Int32Divisor d;
  std::memcpy(&d, b, sizeof d);
  const int32_t x = *static_cast<const int32_t*>(a);
  const uint32_t m = magnitude(x);
  const auto q = uint32_t((uint128(d.magic) * m) >> 64);  // |x| / |d| <= 2^30: |d| >= 2
  const bool exact = m == q * d.magnitude;
  *static_cast<int32_t*>(out) =
      (x < 0) == (d.divisor < 0) ? int32_t(q) : -int32_t(q) - int32_t(!exact);
}

}  // namespace

BinaryScalarKernelFn binary_kernel_by_constant(OpId id, DType dtype, const void* constant,
                                               PreparedConstant& prepared) {
  if ((id != OpId::Mod && id != OpId::FloorDiv) || dtype != DType::int32) return nullptr;
  const int32_t d = *static_cast<const int32_t*>(constant);
  // A zero divisor: the binary kernel raises the op's error.
  if (d == 0 || (id == OpId::FloorDiv && magnitude(d) == 1)) return nullptr;
  const Int32Divisor divisor{UINT64_MAX / magnitude(d) + 1, magnitude(d), d};
  static_assert(sizeof divisor <= sizeof prepared.bytes);
  std::memcpy(prepared.bytes, &divisor, sizeof divisor);
  return id == OpId::Mod ? &mod_int32_by_constant : &floordiv_int32_by_constant;
}

FlatKernelFn flat_kernel(OpId id, DType input_dtype, DType output_dtype) {
  return element_kernel<FlatKernelFn>(id, input_dtype, output_dtype,
                                      []<class K>() { return &K::flat; });
}

void clear_upper_vector_state() {
#if defined(__x86_64__) && !AG_ISA_CONCAT(AG_ISA_IS_BASELINE_, AG_ISA_NS)
  _mm256_zeroupper();
#endif
}

extern const ElementwiseKernels elementwise_kernels = {
#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx)
#define AG_ELEMENTWISE_OP(id, name, arity, infer, kernel, functor, gradient, onnx, api) &kernel,
#include "ag/ops.def"
#undef AG_ELEMENTWISE_OP
#undef AG_OP
#define AG_KERNEL_ADDRESS(kernel) &kernel,
    AG_ELEMENTWISE_EXTRA_KERNELS(AG_KERNEL_ADDRESS)
#undef AG_KERNEL_ADDRESS
        & scalar_kernel,
    &binary_scalar_kernel,
    &binary_kernel_by_constant,
    &flat_kernel,
    &clear_upper_vector_state,
};

}  // namespace ag::ops::AG_ISA_NS
AG_ISA_END
