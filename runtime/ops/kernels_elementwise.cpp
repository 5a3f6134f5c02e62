// Elementwise kernels. Each op's arithmetic is one functor in
// ops/scalar_ops.h; the loops that apply it (same shape, scalar operand,
// general broadcast) are shared. Inner loops are plain indexed loops that the
// compiler vectorises.
#include <string>
#include <type_traits>

#include "ag/error.h"
#include "ops/broadcast.h"
#include "ops/kernels.h"
#include "ops/scalar_ops.h"

namespace ag::ops {

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
  int64_t n = ctx.out_shape->num_elements();
  for (int64_t i = 0; i < n; ++i) out[i] = f(x[i]);
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
  if (na == n && nb == n) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  } else if (nb == 1 && na == n) {
    const In s = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], s);
  } else if (na == 1 && nb == n) {
    const In s = a[0];
    for (int64_t i = 0; i < n; ++i) out[i] = f(s, b[i]);
  } else {
    BroadcastIndexer<2> idx(os, {ctx.inputs[0].shape, ctx.inputs[1].shape});
    idx.for_each_row([&](int64_t o, const int64_t* in, const int64_t* step, int64_t len) {
      for (int64_t j = 0; j < len; ++j)
        out[o + j] = f(a[in[0] + j * step[0]], b[in[1] + j * step[1]]);
    });
  }
}

// Dispatches on the input dtype. `Result` maps the input type to the output
// type; `Op::supports` rejects types the op has no meaning for (infer already
// rejected them, so reaching here is a bug).
template <template <class> class Result, class Op>
void binary_dispatch(const KernelContext& ctx, Op op) {
  visit_dtype(ctx.inputs[0].dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (Op::template supports<T>) {
      binary_loop<T, typename Result<T>::type>(ctx, [&](T a, T b) { return op(a, b); });
    } else {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    }
  });
}

template <template <class> class Result, class Op>
void unary_dispatch(const KernelContext& ctx, Op op) {
  visit_dtype(ctx.inputs[0].dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (Op::template supports<T>) {
      unary_loop<T, typename Result<T>::type>(ctx, [&](T x) { return op(x); });
    } else {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    }
  });
}

template <class T>
struct Same {
  using type = T;
};
template <class T>
struct Bool {
  using type = bool;
};

}  // namespace

// ---- Kernels ------------------------------------------------------------------

void kernel_neg(const KernelContext& ctx) {
  unary_dispatch<Same>(ctx, NegOp{});
}
void kernel_abs(const KernelContext& ctx) {
  unary_dispatch<Same>(ctx, AbsOp{});
}
void kernel_exp(const KernelContext& ctx) {
  unary_dispatch<Same>(ctx, ExpOp{});
}
void kernel_log(const KernelContext& ctx) {
  unary_dispatch<Same>(ctx, LogOp{});
}
void kernel_sqrt(const KernelContext& ctx) {
  unary_dispatch<Same>(ctx, SqrtOp{});
}
void kernel_tanh(const KernelContext& ctx) {
  unary_dispatch<Same>(ctx, TanhOp{});
}
void kernel_sigmoid(const KernelContext& ctx) {
  unary_dispatch<Same>(ctx, SigmoidOp{});
}
void kernel_relu(const KernelContext& ctx) {
  unary_dispatch<Same>(ctx, ReluOp{});
}
void kernel_logical_not(const KernelContext& ctx) {
  unary_dispatch<Same>(ctx, LogicalNotOp{});
}
void kernel_identity(const KernelContext& ctx) {
  unary_dispatch<Same>(ctx, IdentityOp{});
}

void kernel_cast(const KernelContext& ctx) {
  visit_dtype(ctx.inputs[0].dtype, [&](auto in) {
    using In = decltype(in);
    visit_dtype(ctx.out_dtype, [&](auto out) {
      using Out = decltype(out);
      if constexpr (std::is_same_v<Out, bool>) {
        unary_loop<In, Out>(ctx, [](In x) { return x != In(0); });
      } else {
        unary_loop<In, Out>(ctx, [](In x) { return Out(x); });
      }
    });
  });
}

void kernel_add(const KernelContext& ctx) {
  binary_dispatch<Same>(ctx, AddOp{});
}
void kernel_sub(const KernelContext& ctx) {
  binary_dispatch<Same>(ctx, SubOp{});
}
void kernel_mul(const KernelContext& ctx) {
  binary_dispatch<Same>(ctx, MulOp{});
}
void kernel_div(const KernelContext& ctx) {
  binary_dispatch<Same>(ctx, DivOp{});
}
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

void kernel_floordiv(const KernelContext& ctx) {
  if (power_of_two_divisor<false>(ctx)) return;
  binary_dispatch<Same>(ctx, FloorDivOp{{}, &ctx});
}
void kernel_mod(const KernelContext& ctx) {
  if (power_of_two_divisor<true>(ctx)) return;
  binary_dispatch<Same>(ctx, ModOp{{}, &ctx});
}
void kernel_pow(const KernelContext& ctx) {
  binary_dispatch<Same>(ctx, PowOp{{}, &ctx});
}
void kernel_maximum(const KernelContext& ctx) {
  binary_dispatch<Same>(ctx, MaximumOp{});
}
void kernel_minimum(const KernelContext& ctx) {
  binary_dispatch<Same>(ctx, MinimumOp{});
}
void kernel_equal(const KernelContext& ctx) {
  binary_dispatch<Bool>(ctx, EqualOp{});
}
void kernel_not_equal(const KernelContext& ctx) {
  binary_dispatch<Bool>(ctx, NotEqualOp{});
}
void kernel_less(const KernelContext& ctx) {
  binary_dispatch<Bool>(ctx, LessOp{});
}
void kernel_less_equal(const KernelContext& ctx) {
  binary_dispatch<Bool>(ctx, LessEqualOp{});
}
void kernel_greater(const KernelContext& ctx) {
  binary_dispatch<Bool>(ctx, GreaterOp{});
}
void kernel_greater_equal(const KernelContext& ctx) {
  binary_dispatch<Bool>(ctx, GreaterEqualOp{});
}
void kernel_logical_and(const KernelContext& ctx) {
  binary_dispatch<Same>(ctx, LogicalAndOp{});
}
void kernel_logical_or(const KernelContext& ctx) {
  binary_dispatch<Same>(ctx, LogicalOrOp{});
}

// ---- Ternary ----------------------------------------------------------------

void kernel_where(const KernelContext& ctx) {
  visit_dtype(ctx.out_dtype, [&](auto v) {
    using T = decltype(v);
    const bool* c = static_cast<const bool*>(ctx.inputs[0].data);
    const T* x = static_cast<const T*>(ctx.inputs[1].data);
    const T* y = static_cast<const T*>(ctx.inputs[2].data);
    T* out = static_cast<T*>(ctx.out);
    // No broadcasting (the usual case): a plain loop the compiler turns into
    // blends.
    int64_t n = ctx.out_shape->num_elements();
    if (ctx.inputs[0].shape->num_elements() == n && ctx.inputs[1].shape->num_elements() == n &&
        ctx.inputs[2].shape->num_elements() == n) {
      for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? x[i] : y[i];
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

}  // namespace ag::ops
