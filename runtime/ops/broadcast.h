// NumPy broadcasting as row iteration: the output is walked one innermost row
// at a time, with each input's offset and step (0 for a broadcast dim), so
// kernels keep a tight inner loop. Internal to the runtime.
#pragma once

#include <array>
#include <cstdint>

#include "ag/shape.h"

namespace ag::ops {

template <int N>
class BroadcastIndexer {
 public:
  BroadcastIndexer(const Shape& out, std::array<const Shape*, N> inputs) : out_(out) {
    int rank = out.rank();
    for (int k = 0; k < N; ++k) {
      const Shape& in = *inputs[size_t(k)];
      int64_t stride = 1;
      for (int d = rank - 1; d >= 0; --d) {
        int id = d - (rank - in.rank());
        int64_t dim = id >= 0 ? in[id] : 1;
        strides_[size_t(k)][size_t(d)] = dim == 1 ? 0 : stride;
        stride *= dim;
      }
    }
  }

  // f(out_offset, const int64_t* in_offsets, const int64_t* in_steps, row_length)
  template <class F>
  void for_each_row(F&& f) const {
    int rank = out_.rank();
    std::array<int64_t, N> offsets{};
    if (rank == 0) {
      std::array<int64_t, N> steps{};
      f(int64_t{0}, offsets.data(), steps.data(), int64_t{1});
      return;
    }
    if (out_.num_elements() == 0) return;
    std::array<int64_t, N> steps;
    for (int k = 0; k < N; ++k) steps[size_t(k)] = strides_[size_t(k)][size_t(rank - 1)];
    int64_t row = out_[rank - 1];
    int64_t rows = out_.num_elements() / row;
    std::array<int64_t, Shape::kMaxRank> counter{};
    for (int64_t r = 0; r < rows; ++r) {
      f(r * row, offsets.data(), steps.data(), row);
      // Advance the odometer over the outer dims.
      for (int d = rank - 2; d >= 0; --d) {
        for (int k = 0; k < N; ++k) offsets[size_t(k)] += strides_[size_t(k)][size_t(d)];
        if (++counter[size_t(d)] < out_[d]) break;
        for (int k = 0; k < N; ++k) offsets[size_t(k)] -= strides_[size_t(k)][size_t(d)] * out_[d];
        counter[size_t(d)] = 0;
      }
    }
  }

 private:
  const Shape& out_;
  std::array<std::array<int64_t, Shape::kMaxRank>, N> strides_{};
};

}  // namespace ag::ops
