// Creation kernels: range, zeros and the stateful random ops. Random values come
// from the counter-based generator of ops/random.h: element i of a draw uses
// random_bits(state, i), then the state's counter moves past the draw, so a
// seed gives the same sequence eagerly and in a graph.
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <string>

#include "ag/error.h"
#include "ops/kernels.h"
#include "ops/random.h"
#include "ops/scalar_ops.h"

namespace ag::ops {
namespace {

RandomState& random_state(const KernelContext& ctx) {
  if (!ctx.rng) throw InternalError(std::string(ctx.op_name) + ": kernel called without a state");
  return *ctx.rng;
}

// A uniform value in [0, 1) with T's full precision.
template <class T>
T unit_interval(uint64_t bits) {
  constexpr int kMantissa = std::numeric_limits<T>::digits;
  return T(bits >> (64 - kMantissa)) * (T(1) / T(uint64_t{1} << kMantissa));
}

}  // namespace

// out[i] = start + i * delta, wrapping for integers.
void kernel_range(const KernelContext& ctx) {
  int64_t n = ctx.out_shape->num_elements();
  visit_dtype(ctx.out_dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_same_v<T, bool>) {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    } else {
      const T start = *static_cast<const T*>(ctx.inputs[0].data);
      const T delta = *static_cast<const T*>(ctx.inputs[2].data);
      T* out = static_cast<T*>(ctx.out);
      const scalar::AddOp add;
      const scalar::MulOp mul;
      for (int64_t i = 0; i < n; ++i) out[i] = add(start, mul(T(i), delta));
    }
  });
}

// Every dtype's zero is all bits clear. (An empty output may have no memory.)
void kernel_zeros(const KernelContext& ctx) {
  const size_t bytes = size_t(ctx.out_shape->num_elements()) * dtype_size(ctx.out_dtype);
  if (bytes > 0) std::memset(ctx.out, 0, bytes);
}

// Floats in [lo, hi); integers in [lo, hi).
void kernel_random_uniform(const KernelContext& ctx) {
  RandomState& rng = random_state(ctx);
  int64_t n = ctx.out_shape->num_elements();
  const double lo = ctx.attrs->lo, hi = ctx.attrs->hi;
  visit_dtype(ctx.out_dtype, [&](auto v) {
    using T = decltype(v);
    T* out = static_cast<T*>(ctx.out);
    if constexpr (std::is_floating_point_v<T>) {
      const T low = T(lo), span = T(hi - lo), high = T(hi);
      // Rounding can carry lo + span * u up to hi itself; keep it below.
      const T below_high = low < high ? std::nextafter(high, low) : low;
      for (int64_t i = 0; i < n; ++i) {
        T x = low + span * unit_interval<T>(random_bits(rng, uint64_t(i)));
        out[i] = x < high ? x : below_high;
      }
    } else if constexpr (scalar::kIsInt<T>) {
      // infer_random checked lo < hi. The modulo's bias is below span / 2^64.
      const int64_t low = int64_t(lo);
      const uint64_t span = uint64_t(int64_t(hi)) - uint64_t(low);
      for (int64_t i = 0; i < n; ++i) {
        out[i] = T(uint64_t(low) + random_bits(rng, uint64_t(i)) % span);
      }
    } else {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    }
  });
  rng.counter += uint64_t(n);
}

// Box-Muller: a pair of uniforms gives two independent normal values. Pairs
// use draws 2j and 2j + 1; an odd last element splits its one draw in two
// halves, so a call uses exactly n draws, as the executor assumes.
void kernel_random_normal(const KernelContext& ctx) {
  RandomState& rng = random_state(ctx);
  int64_t n = ctx.out_shape->num_elements();
  const double mean = ctx.attrs->lo, stddev = ctx.attrs->hi;
  visit_dtype(ctx.out_dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_floating_point_v<T>) {
      T* out = static_cast<T*>(ctx.out);
      for (int64_t i = 0; i < n; i += 2) {
        bool paired = i + 1 < n;
        uint64_t bits1 = random_bits(rng, uint64_t(i));
        uint64_t bits2 = paired ? random_bits(rng, uint64_t(i) + 1) : bits1 << 32;
        // 1 - u lies in (0, 1], so the log is finite.
        double u1 = 1.0 - unit_interval<double>(paired ? bits1 : bits1 & ~uint64_t{0xffffffff});
        double u2 = unit_interval<double>(bits2);
        double radius = std::sqrt(-2.0 * std::log(u1));
        double angle = 2.0 * std::numbers::pi * u2;
        out[i] = T(mean + stddev * radius * std::cos(angle));
        if (paired) out[i + 1] = T(mean + stddev * radius * std::sin(angle));
      }
    } else {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    }
  });
  rng.counter += uint64_t(n);
}

}  // namespace ag::ops
