// tanh of a float, written so that compilers vectorise a loop over it:
// straight-line arithmetic and selects, no calls, no branches, no lookup
// tables. glibc's tanhf is a scalar call per element (it and its expm1f were
// 40% of the RNN forward's profile). scalar::TanhOp calls this for float32,
// so the kernel, the scalar and flat steps and the fused steps all compute
// each element with this same formula, whatever the vector width or the
// element's position: the result depends on the element alone.
//
// Accuracy (tests/runtime/tanh_accuracy_test.cpp checks it against tanh in
// double, in units of the spacing of floats at the exact result): at most
// 1.05 ULP over every float, checked exhaustively once (glibc's tanhf: 2.19
// ULP); odd to the bit; ±0 keep their sign, subnormals return themselves,
// |x| > 9.011 (where tanh rounds to 1) and ±inf give exactly ±1, NaN gives
// NaN. It needs IEEE float arithmetic without
// contraction into FMA or reassociation (the project builds in ISO C++ mode,
// where GCC does not contract, and without -ffast-math).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

namespace ag::ops {

// tanh(a) for 0 <= a < 0.875: a + a^3 P(a^2), P the minimax polynomial of
// degree 6 for the relative error of tanh on [0, 0.875] (0.013 ULP before
// rounding). A NaN passes through.
inline float fast_tanh_small(float a) {
  float u = a * a;
  float s = -0x1.f9da1ap-12f;
  s = s * u + 0x1.5b7924p-9f;
  s = s * u + -0x1.110564p-7f;
  s = s * u + 0x1.6377ccp-6f;
  s = s * u + -0x1.b9da72p-5f;
  s = s * u + 0x1.110faap-3f;
  s = s * u + -0x1.55555p-2f;
  return a + a * u * s;
}

// tanh(a) for a >= 0.875: 1 - 2 / (e^2a + 1), no cancellation since the
// result is over 0.7. e^2a = 2^k (1 + p) with p = e^r - 1, r = 2a - k ln 2,
// |r| <= ln 2 / 2. a is capped at 10 (tanh rounds to 1 from 9.011 on) so
// that 2^k stays finite. The cap is an integer minimum of the bits
// (non-negative floats order as their bits do): a float `?:` here lets GCC
// fold this path to a constant in a branch, which it then does not
// vectorise.
inline float fast_tanh_large(float a) {
  float capped =
      std::bit_cast<float>(std::min(std::bit_cast<int32_t>(a), std::bit_cast<int32_t>(10.0f)));
  float y = 2.0f * capped;
  // Adding 1.5 * 2^23 rounds y / ln 2 to the integer k, which the sum holds
  // in its low mantissa bits.
  constexpr float kRound = 0x1.8p23f;
  float shifted = y * 0x1.715476p+0f + kRound;
  float k = shifted - kRound;
  uint32_t k_bits = std::bit_cast<uint32_t>(shifted) - std::bit_cast<uint32_t>(kRound);
  float scale = std::bit_cast<float>((k_bits + 127u) << 23);  // 2^k, 0 <= k <= 29
  // ln 2 in two parts: k * 0x1.62e4p-1 is exact for k < 2^8.
  float r = (y - k * 0x1.62e4p-1f) - k * 0x1.7f7d1cp-20f;
  float q = 1.0f / 5040;
  q = q * r + 1.0f / 720;
  q = q * r + 1.0f / 120;
  q = q * r + 1.0f / 24;
  q = q * r + 1.0f / 6;
  q = q * r + 0.5f;
  float p = r + r * r * q;
  return 1.0f - 2.0f / (scale * p + (scale + 1.0f));
}

// Both formulas, one selected per element (NaN takes the small one, which
// passes it through): straight-line code for vector loops.
inline float fast_tanh(float x) {
  float a = std::fabs(x);
  float small = fast_tanh_small(a);
  float large = fast_tanh_large(a);
  // Selected by a bit mask rather than `?:`, for the same reason as the cap.
  uint32_t use_small = 0u - uint32_t(!(a >= 0.875f));
  uint32_t bits =
      (std::bit_cast<uint32_t>(small) & use_small) | (std::bit_cast<uint32_t>(large) & ~use_small);
  return std::copysign(std::bit_cast<float>(bits), x);
}

// The same bits for one element at a time (the executor's scalar and flat
// steps: a staged loop over a few values), computing only the formula the
// element takes: there the other formula's latency is the step's time.
inline float fast_tanh_one(float x) {
  float a = std::fabs(x);
  return std::copysign(a >= 0.875f ? fast_tanh_large(a) : fast_tanh_small(a), x);
}

}  // namespace ag::ops
