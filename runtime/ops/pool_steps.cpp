// max_pool_grad's channels-last loop (ops/pool_kernels.h), compiled once per
// instruction set (ops/isa.h).
//
// A channels-last window's channels are adjacent, so the search runs on
// vectors of channels: each window position's channels are compared with
// the maxima so far and selected by mask, with no branch (the maxima of
// random data would mispredict every other compare), then dy is added at
// every position of the window, masked to 0 where the position does not
// hold the maximum (dx starts at +0 and sums of +0 and anything never give
// -0, so adding a masked +0 changes no bit). The channel count is a
// template parameter, split into vectors of 16, 8 and 4 bytes and a last
// element: with a count known only at run time, or with one vector type
// wider than the channels, GCC moves the short rows through the stack, and
// runs 3 to 8 times slower.
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "ops/isa.h"
#include "ops/kernel_tables.h"
#include "ops/pool_kernels.h"

AG_ISA_BEGIN
namespace ag::ops::AG_ISA_NS {
namespace {

// GCC's vectors of `Bytes` bytes of T, and the integer masks of their compares.
template <class T, int Bytes>
struct Lanes {
  using Int = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  typedef T Value __attribute__((vector_size(Bytes)));
  typedef Int Mask __attribute__((vector_size(Bytes)));
  static constexpr int kCount = Bytes / int(sizeof(T));
};

template <class V>
V load(const void* from) {
  V v;
  std::memcpy(&v, from, sizeof v);
  return v;
}

// Adds dy at each window's maximum, for the channels [0, kCount) of a vector
// of `Bytes` bytes from `x`, `dy` and `dx` on (each already offset to its
// first channel); window[k] is the offset of window position k, n of them.
template <class T, int Bytes>
void add_at_maxima(const T* x, const T* dy, T* dx, const int64_t* window, int64_t n) {
  using L = Lanes<T, Bytes>;
  using Value = typename L::Value;
  using Mask = typename L::Mask;
  Value best = load<Value>(x + window[0]);
  Mask best_k = {};
  for (int64_t k = 1; k < n; ++k) {
    const Value v = load<Value>(x + window[k]);
    const Mask take = (v > best) | ((v != v) & (best == best));  // the first NaN too
    best = take ? v : best;
    best_k = take ? Mask{} + typename L::Int(k) : best_k;
  }
  const Mask gradient = load<Mask>(dy);
  for (int64_t k = 0; k < n; ++k) {
    Value d = load<Value>(dx + window[k]);
    d += reinterpret_cast<Value>(gradient & (best_k == typename L::Int(k)));
    std::memcpy(dx + window[k], &d, sizeof d);
  }
}

// add_at_maxima for C channels, in vectors of 16 bytes, then 8, then 4.
template <class T, int C>
void add_at_window_maxima(const T* x, const T* dy, T* dx, const int64_t* window, int64_t n) {
  constexpr int kPerVector = 16 / int(sizeof(T));
  int c = 0;
  for (; c + kPerVector <= C; c += kPerVector)
    add_at_maxima<T, 16>(x + c, dy + c, dx + c, window, n);
  if constexpr (C % kPerVector * sizeof(T) >= 8) {
    add_at_maxima<T, 8>(x + c, dy + c, dx + c, window, n);
    c += 8 / int(sizeof(T));
  }
  if constexpr (sizeof(T) == 4 && C % 2 == 1) add_at_maxima<T, 4>(x + c, dy + c, dx + c, window, n);
}

// The tile's windows in every batch item, for the C channels from
// `first_channel` on.
template <class T, int C>
void add_in_blocks(const pool_loops::MaxPoolGradTile<T>& t, int64_t first_channel) {
  for (int64_t b = 0; b < t.batch; ++b) {
    const T* x = t.x + b * t.in_batch + first_channel;
    T* dx = t.dx + b * t.in_batch + first_channel;
    const T* dy = t.dy + b * t.out_batch + first_channel;
    for (int64_t r = 0; r < t.rows; ++r) {
      const int64_t n = t.counts[r];
      if (n > 0)
        add_at_window_maxima<T, C>(x, dy + r * t.channels, dx, t.offsets + r * t.window, n);
    }
  }
}

constexpr int kBlock = 16;

template <class T, size_t... Cs>
constexpr auto block_functions(std::index_sequence<Cs...>) {
  using Fn = void (*)(const pool_loops::MaxPoolGradTile<T>&, int64_t);
  return std::array<Fn, sizeof...(Cs)>{&add_in_blocks<T, int(Cs) + 1>...};
}

// The channels in blocks of kBlock, then the rest: one instantiation per
// count up to kBlock.
template <class T>
void max_pool_grad_tile(const pool_loops::MaxPoolGradTile<T>& t) {
  static constexpr auto kByChannels = block_functions<T>(std::make_index_sequence<kBlock>());
  int64_t c = 0;
  for (; c + kBlock <= t.channels; c += kBlock) kByChannels[kBlock - 1](t, c);
  if (c < t.channels) kByChannels[size_t(t.channels - c - 1)](t, c);
}

}  // namespace

extern const PoolStepKernels pool_step_kernels = {&max_pool_grad_tile<float>,
                                                  &max_pool_grad_tile<double>};

}  // namespace ag::ops::AG_ISA_NS
AG_ISA_END
