// unsorted_segment_sum: rows of data added into zeros at their segment ids,
// a scatter-add (gather's gradient). Rows are contiguous, so each addition is
// one inner loop over a row; the memory is the output's, never ids x rows.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "ag/error.h"
#include "ops/kernels.h"
#include "ops/scalar_ops.h"

namespace ag::ops {
namespace {

// row i of [count, inner] data added into row ids[i] of [segments, inner]
// out, after every id is checked (nothing is written for a bad one).
template <class T, class I>
void segment_sum(const KernelContext& ctx, const I* ids, int64_t count, int64_t segments,
                 int64_t inner) {
  for (int64_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || ids[i] >= segments) {
      throw InvalidArgumentError(std::string(ctx.op_name) + ": segment_ids[" + std::to_string(i) +
                                 "] = " + std::to_string(ids[i]) + " is not in [0, " +
                                 std::to_string(segments) + ")");
    }
  }
  using A = typename scalar::Wrapping<T>::type;  // integers wrap, as in every integer op
  const A* data = static_cast<const A*>(ctx.inputs[0].data);
  A* out = static_cast<A*>(ctx.out);
  std::fill(out, out + segments * inner, A(0));
  for (int64_t i = 0; i < count; ++i) {
    A* row = out + int64_t(ids[i]) * inner;
    const A* src = data + i * inner;
    for (int64_t q = 0; q < inner; ++q) row[q] += src[q];
  }
}

}  // namespace

void kernel_unsorted_segment_sum(const KernelContext& ctx) {
  const Shape& data = *ctx.inputs[0].shape;
  const Shape& ids = *ctx.inputs[1].shape;
  const int64_t count = ids.num_elements();
  const int64_t segments = (*ctx.out_shape)[0];
  int64_t inner = 1;
  for (int d = ids.rank(); d < data.rank(); ++d) inner *= data[d];
  visit_dtype(ctx.out_dtype, [&](auto tv) {
    using T = decltype(tv);
    if constexpr (std::is_same_v<T, bool>) {
      throw InternalError(std::string(ctx.op_name) + ": bool data");
    } else {
      visit_dtype(ctx.inputs[1].dtype, [&](auto iv) {
        using I = decltype(iv);
        if constexpr (!std::is_same_v<I, int32_t> && !std::is_same_v<I, int64_t>) {
          throw InternalError(std::string(ctx.op_name) + ": segment_ids must be int32 or int64");
        } else {
          segment_sum<T>(ctx, static_cast<const I*>(ctx.inputs[1].data), count, segments, inner);
        }
      });
    }
  });
}

}  // namespace ag::ops
