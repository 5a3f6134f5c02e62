// The arithmetic of the elementwise ops: one functor per op, computing one
// element, named by the op's AG_ELEMENTWISE_OP line in ops.def. Elementwise
// kernels apply them over buffers (kernels_elementwise.cpp); reductions and the
// integer matmul reuse AddOp, MulOp, MaximumOp and MinimumOp, so each op's
// arithmetic is written exactly once. Internal to the runtime.
#pragma once

#include <cmath>
#include <string>
#include <type_traits>

#include "ag/error.h"
#include "ops/fast_tanh.h"
#include "ops/op_registry.h"

namespace ag::ops::scalar {

template <class T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The element types a functor supports, as its base class.
struct Numeric {
  template <class T>
  static constexpr bool supports = !std::is_same_v<T, bool>;
};
struct Floating {
  template <class T>
  static constexpr bool supports = std::is_floating_point_v<T>;
};
struct Any {
  template <class T>
  static constexpr bool supports = true;
};
struct BoolOnly {
  template <class T>
  static constexpr bool supports = std::is_same_v<T, bool>;
};
struct IntegerOnly {
  template <class T>
  static constexpr bool supports = kIsInt<T>;
};

// Signed integer arithmetic wraps (as TensorFlow's does) instead of being
// undefined behaviour: compute in the unsigned type.
template <class T, class F>
T wrapping(T a, T b, F f) {
  if constexpr (kIsInt<T>) {
    using U = std::make_unsigned_t<T>;
    return T(f(U(a), U(b)));
  } else {
    return T(f(a, b));
  }
}

// The type a kernel loop adds and multiplies in, for the same reason:
// integers in their unsigned type, floats as they are.
template <class T>
struct Wrapping {
  using type = T;
};
template <class T>
  requires kIsInt<T>
struct Wrapping<T> {
  using type = std::make_unsigned_t<T>;
};

[[noreturn]] inline void integer_division_by_zero(OpId op) {
  throw InvalidArgumentError(std::string(op_def(op).name) + ": integer division by zero");
}

#define AG_UNARY_OP(Name, Domain, expr) \
  struct Name : Domain {                \
    template <class T>                  \
    T operator()(T x) const {           \
      return expr;                      \
    }                                   \
  };
// Floats negate directly so that -(0.0) is -0.0.
AG_UNARY_OP(NegOp, Numeric,
            kIsInt<T> ? wrapping(T(0), x, [](auto a, auto b) { return a - b; }) : T(-x))
AG_UNARY_OP(AbsOp, Numeric, x < 0 ? NegOp{}(x) : T(x == 0 ? T(0) : x))
AG_UNARY_OP(ExpOp, Floating, std::exp(x))
AG_UNARY_OP(LogOp, Floating, std::log(x))
AG_UNARY_OP(SqrtOp, Floating, std::sqrt(x))
AG_UNARY_OP(SigmoidOp, Floating, T(1) / (T(1) + std::exp(-x)))
AG_UNARY_OP(ReluOp, Numeric, x > 0 ? x : T(0))
AG_UNARY_OP(FloorOp, Floating, std::floor(x))
AG_UNARY_OP(CeilOp, Floating, std::ceil(x))
// sign(0) is 0 and a NaN stays NaN (the last branch returns x itself).
AG_UNARY_OP(SignOp, Numeric, x > 0 ? T(1) : x < 0 ? T(-1) : x == 0 ? T(0) : x)
AG_UNARY_OP(LogicalNotOp, BoolOnly, !x)
AG_UNARY_OP(IdentityOp, Any, x)
AG_UNARY_OP(InvertOp, IntegerOnly, T(~x))
// Trigonometric and hyperbolic functions and their inverses (tf.math).
AG_UNARY_OP(SinOp, Floating, std::sin(x))
AG_UNARY_OP(CosOp, Floating, std::cos(x))
AG_UNARY_OP(TanOp, Floating, std::tan(x))
AG_UNARY_OP(AsinOp, Floating, std::asin(x))
AG_UNARY_OP(AcosOp, Floating, std::acos(x))
AG_UNARY_OP(AtanOp, Floating, std::atan(x))
AG_UNARY_OP(SinhOp, Floating, std::sinh(x))
AG_UNARY_OP(CoshOp, Floating, std::cosh(x))
AG_UNARY_OP(AsinhOp, Floating, std::asinh(x))
AG_UNARY_OP(AcoshOp, Floating, std::acosh(x))
AG_UNARY_OP(AtanhOp, Floating, std::atanh(x))
AG_UNARY_OP(ErfOp, Floating, std::erf(x))
// log(1 + x) and exp(x) - 1, exact near 0; 1 / sqrt(x) and 1 / x.
AG_UNARY_OP(Log1pOp, Floating, std::log1p(x))
AG_UNARY_OP(Expm1Op, Floating, std::expm1(x))
AG_UNARY_OP(RsqrtOp, Floating, T(1) / std::sqrt(x))
AG_UNARY_OP(ReciprocalOp, Floating, T(1) / x)
// Activations (tf.nn): softplus without overflow for large x; elu with
// alpha 1; selu with its fixed alpha and scale; gelu in its exact (erf) form.
AG_UNARY_OP(SoftplusOp, Floating, x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)))
AG_UNARY_OP(SoftsignOp, Floating, x / (T(1) + std::abs(x)))
AG_UNARY_OP(EluOp, Floating, x > 0 ? x : std::expm1(x))
AG_UNARY_OP(SeluOp, Floating,
            x > 0 ? T(1.0507009873554804934193349852946) * x
                  : T(1.0507009873554804934193349852946 * 1.6732632423543772848170429916717) *
                        std::expm1(x))
AG_UNARY_OP(GeluOp, Floating,
            T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440084436210485))))
#undef AG_UNARY_OP

#define AG_FLOATING_TEST(Name, expr) \
  struct Name : Floating {           \
    template <class T>               \
    bool operator()(T x) const {     \
      return expr;                   \
    }                                \
  };
AG_FLOATING_TEST(IsNanOp, std::isnan(x))
AG_FLOATING_TEST(IsInfOp, std::isinf(x))
AG_FLOATING_TEST(IsFiniteOp, std::isfinite(x))
#undef AG_FLOATING_TEST

// float32 by a formula that vectorises (ops/fast_tanh.h), float64 by libm.
// `one` is for one element at a time (call_one): the same bits, computing
// only the formula the element takes.
struct TanhOp : Floating {
  template <class T>
  T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return fast_tanh(x);
    } else {
      return std::tanh(x);
    }
  }
  template <class T>
  T one(T x) const {
    if constexpr (std::is_same_v<T, float>) {
      return fast_tanh_one(x);
    } else {
      return std::tanh(x);
    }
  }
};

// f on one element: f.one where the functor has it (the same bits as f,
// cheaper outside a vector loop), else f.
template <class F, class... T>
auto call_one(const F& f, T... x) {
  if constexpr (requires { f.one(x...); }) {
    return f.one(x...);
  } else {
    return f(x...);
  }
}

#define AG_BINARY_OP(Name, Domain, Result, expr) \
  struct Name : Domain {                         \
    template <class T>                           \
    Result operator()(T a, T b) const {          \
      return expr;                               \
    }                                            \
  };
AG_BINARY_OP(AddOp, Numeric, T, wrapping(a, b, [](auto x, auto y) { return x + y; }))
AG_BINARY_OP(SubOp, Numeric, T, wrapping(a, b, [](auto x, auto y) { return x - y; }))
AG_BINARY_OP(MulOp, Numeric, T, wrapping(a, b, [](auto x, auto y) { return x * y; }))
AG_BINARY_OP(DivOp, Floating, T, a / b)
// Any: reduce_max/min accept bool (any/all).
AG_BINARY_OP(MaximumOp, Any, T, a > b ? a : b)
AG_BINARY_OP(MinimumOp, Any, T, a < b ? a : b)
AG_BINARY_OP(EqualOp, Any, bool, a == b)
AG_BINARY_OP(NotEqualOp, Any, bool, a != b)
AG_BINARY_OP(LessOp, Any, bool, a < b)
AG_BINARY_OP(LessEqualOp, Any, bool, a <= b)
AG_BINARY_OP(GreaterOp, Any, bool, a > b)
AG_BINARY_OP(GreaterEqualOp, Any, bool, a >= b)
AG_BINARY_OP(LogicalAndOp, BoolOnly, T, a&& b)
AG_BINARY_OP(LogicalOrOp, BoolOnly, T, a || b)
AG_BINARY_OP(LogicalXorOp, BoolOnly, T, a != b)
AG_BINARY_OP(BitwiseAndOp, IntegerOnly, T, T(a& b))
AG_BINARY_OP(BitwiseOrOp, IntegerOnly, T, T(a | b))
AG_BINARY_OP(BitwiseXorOp, IntegerOnly, T, T(a ^ b))
#undef AG_BINARY_OP

// Shifts by a count outside [0, bits) are defined here rather than undefined
// behaviour: all bits shifted out (0; a right shift of a negative value keeps
// its sign bits: -1). A left shift is computed in the unsigned type.
struct LeftShiftOp : IntegerOnly {
  template <class T>
  T operator()(T a, T b) const {
    using U = std::make_unsigned_t<T>;
    if (b < 0 || b >= T(sizeof(T) * 8)) return T(0);
    return T(U(a) << b);
  }
};
struct RightShiftOp : IntegerOnly {
  template <class T>
  T operator()(T a, T b) const {
    if (b < 0 || b >= T(sizeof(T) * 8)) return a < 0 ? T(-1) : T(0);
    return T(a >> b);
  }
};

// tf.round: half to even (banker's rounding); integers are already whole.
// Written out rather than std::nearbyint, which follows the thread's
// floating-point rounding mode. x - floor(x) is exact, so the half-way test
// is too; copysign keeps the sign of a result of zero (round(-0.4) is -0.0).
struct RoundOp : Numeric {
  template <class T>
  T operator()(T x) const {
    if constexpr (kIsInt<T>) {
      return x;
    } else {
      T down = std::floor(x);
      T fraction = x - down;
      if (fraction > T(0.5) || (fraction == T(0.5) && std::fmod(down, T(2)) != 0)) down += 1;
      return std::copysign(down, x);
    }
  }
};

// tf.clip_by_value is minimum(t, max) then maximum(that, min), both passing
// a NaN operand through: so min wins when min > max, and a NaN in t or in a
// bound gives NaN.
struct ClipByValueOp : Numeric {
  template <class T>
  T operator()(T x, T lo, T hi) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x)) return x;
      if (std::isnan(hi)) return hi;
      if (std::isnan(lo)) return lo;
    }
    T below = hi < x ? hi : x;
    return below < lo ? lo : below;
  }
};

// Functors that can fail name their op in the error.
struct FloorDivOp : Numeric {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (kIsInt<T>) {
      if (b == 0) integer_division_by_zero(OpId::FloorDiv);
      // INT_MIN / -1 overflows: negate with wrapping instead.
      if (b == T(-1)) return NegOp{}(a);
      T q = a / b;
      return (a % b != 0 && ((a < 0) != (b < 0))) ? T(q - 1) : q;
    } else {
      return std::floor(a / b);
    }
  }
};

// The floor remainder (the divisor's sign) from the truncated one, r.
template <class T>
T floor_remainder(T r, T b) {
  return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
}

// The result takes the divisor's sign, matching FloorDivOp.
struct ModOp : Numeric {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (kIsInt<T>) {
      if (b == 0) integer_division_by_zero(OpId::Mod);
      if (b == T(-1)) return T(0);
      return floor_remainder(T(a % b), b);
    } else {
      return floor_remainder(T(std::fmod(a, b)), b);
    }
  }
};

struct PowOp : Numeric {
  template <class T>
  T operator()(T base, T e) const {
    if constexpr (kIsInt<T>) {
      if (e < 0) {
        throw InvalidArgumentError(std::string(op_def(OpId::Pow).name) +
                                   ": integers to negative integer powers are not allowed");
      }
      // Square-and-multiply in the unsigned type, wrapping like the other ops.
      using U = std::make_unsigned_t<T>;
      U result = 1, b = U(base);
      for (U k = U(e); k; k >>= 1) {
        if (k & 1) result *= b;
        b *= b;
      }
      return T(result);
    } else {
      return std::pow(base, e);
    }
  }
};

}  // namespace ag::ops::scalar

namespace ag::ops {

// The functor of each AG_ELEMENTWISE_OP row of ag/ops.def, by the op's id
// (void for other ops): how code outside the elementwise kernels, such as the
// executor's fused kernels, reaches an op's arithmetic without a list of its own.
template <OpId>
struct FunctorOf {
  using type = void;
};
#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx)
#define AG_ELEMENTWISE_OP(id, name, arity, infer, kernel, functor, gradient, onnx, api) \
  template <>                                                                           \
  struct FunctorOf<OpId::id> {                                                          \
    using type = scalar::functor;                                                       \
  };
#include "ag/ops.def"
#undef AG_ELEMENTWISE_OP
#undef AG_OP

// then(F{}) for the functor F of `id` when `id` is one of kIds, else `otherwise`.
template <OpId... kIds, class Then, class Result>
Result with_functor(OpId id, Then then, Result otherwise) {
  static_assert((!std::is_void_v<typename FunctorOf<kIds>::type> && ...),
                "with_functor takes elementwise ops of ag/ops.def");
  Result result = otherwise;
  ((id == kIds ? (result = then(typename FunctorOf<kIds>::type{}), true) : false) || ...);
  return result;
}

}  // namespace ag::ops
