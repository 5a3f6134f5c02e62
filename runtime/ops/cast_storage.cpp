#include "ops/cast_storage.h"

#include <cmath>
#include <type_traits>

namespace ag::ops {
namespace {

// Every input goes through one of three wide types (double, int64, uint64),
// so each dtype has one loader and one storer per wide type rather than a
// loop per pair of dtypes.
template <class T>
using Wide = std::conditional_t<
    std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t> || std::is_floating_point_v<T>,
    double,
    std::conditional_t<std::is_unsigned_v<T> && !std::is_same_v<T, bool>, uint64_t, int64_t>>;

template <class Out, class W>
Out narrow(W w) {
  if constexpr (std::is_same_v<Out, bool>) {
    return w != W(0);
  } else if constexpr (std::is_same_v<Out, float16_t> || std::is_same_v<Out, bfloat16_t>) {
    return Out(double(w));
  } else if constexpr (std::is_floating_point_v<Out>) {
    return Out(w);
  } else if constexpr (std::is_same_v<W, double>) {
    // Truncation toward zero, defined for every double: out of int64's range
    // (and above, for uint64) it saturates, NaN gives 0.
    if (std::isnan(w)) return Out(0);
    if (std::is_same_v<Out, uint64_t> && w >= 0x1p63) {
      return w >= 0x1p64 ? Out(UINT64_MAX) : Out(uint64_t(w));
    }
    if (w >= 0x1p63) return Out(INT64_MAX);
    if (w < -0x1p63) return Out(INT64_MIN);
    return Out(int64_t(w));
  } else {
    return Out(w);  // integer to integer: modulo the width
  }
}

constexpr int64_t kChunk = 256;

template <class In>
void cast_from(const In* in, DType out_dtype, void* out, int64_t n) {
  using W = Wide<In>;
  W wide[kChunk];
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t len = std::min(kChunk, n - start);
    // int8 elements are numbers, not characters.
    for (int64_t i = 0; i < len; ++i)
      wide[i] = W(in[start + i]);  // NOLINT(bugprone-signed-char-misuse)
    visit_storage_dtype(out_dtype, [&](auto o) {
      using Out = decltype(o);
      Out* dst = static_cast<Out*>(out) + start;
      for (int64_t i = 0; i < len; ++i) dst[i] = narrow<Out>(wide[i]);
    });
  }
}

}  // namespace

void cast_storage(const void* in, DType in_dtype, void* out, DType out_dtype, int64_t n) {
  visit_storage_dtype(in_dtype, [&](auto v) {
    using In = decltype(v);
    cast_from(static_cast<const In*>(in), out_dtype, out, n);
  });
}

}  // namespace ag::ops
