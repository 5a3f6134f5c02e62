// Convolution as matrix products: each group's input patches, one row per
// output position (im2col), times the group's filter as a [kernel positions x
// in-channels, out-channels] matrix, on ops/gemm.h. The rows go in tiles, so
// that the patch matrix stays small; see conv_kernels.h.
#include <algorithm>
#include <vector>

#include "ops/conv_kernels.h"
#include "ops/gemm.h"
#include "ops/scalar_ops.h"

namespace ag::ops {
namespace conv_im2col {
namespace {

// The patch matrix of one tile holds at most this many elements (1 MiB of
// float32), and at least one row.
constexpr int64_t kTileElements = int64_t(1) << 18;

// The sizes of one group's matrices.
struct GroupDims {
  int64_t in_channels, out_channels;  // per group
  int64_t patch;                      // kernel positions x in-channels: a patch row
  int64_t rows;                       // output positions per tile
};

GroupDims group_dims(const ConvGeometry& g) {
  GroupDims d;
  d.in_channels = g.in_channels / g.groups;
  d.out_channels = g.out_channels / g.groups;
  d.patch = g.kernel_positions() * d.in_channels;
  d.rows = std::clamp<int64_t>(kTileElements / std::max<int64_t>(d.patch, 1), 1,
                               std::max<int64_t>(g.out_positions(), 1));
  return d;
}

// The patch rows of the tile (rows x patch), or their transpose.
template <class T>
void gather_patches(const ConvGeometry& g, const GroupDims& d, const ConvGeometry::Strides& in,
                    const T* x, const std::vector<int64_t>& sources, int64_t rows, bool transposed,
                    T* patches) {
  const int64_t kernel_positions = g.kernel_positions();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t kp = 0; kp < kernel_positions; ++kp) {
      const int64_t source = sources[size_t(r * kernel_positions + kp)];
      for (int64_t c = 0; c < d.in_channels; ++c) {
        const int64_t column = kp * d.in_channels + c;
        const T v = source < 0 ? T(0) : x[c * in.channel + source * in.position];
        patches[transposed ? column * rows + r : r * d.patch + column] = v;
      }
    }
  }
}

// Adds the patch rows of the tile back where gather_patches read them.
template <class T>
void scatter_patches(const ConvGeometry& g, const GroupDims& d, const ConvGeometry::Strides& in,
                     const T* patches, const std::vector<int64_t>& sources, int64_t rows, T* dx) {
  const int64_t kernel_positions = g.kernel_positions();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t kp = 0; kp < kernel_positions; ++kp) {
      const int64_t source = sources[size_t(r * kernel_positions + kp)];
      if (source < 0) continue;
      for (int64_t c = 0; c < d.in_channels; ++c)
        dx[c * in.channel + source * in.position] += patches[r * d.patch + kp * d.in_channels + c];
    }
  }
}

// Group `group`'s filter as a [patch x out-channels] matrix, or its transpose.
template <class T>
std::vector<T> group_filter(const ConvGeometry& g, const GroupDims& d, const T* w, int64_t group,
                            bool transposed) {
  std::vector<T> m(size_t(d.patch * d.out_channels));
  for (int64_t row = 0; row < d.patch; ++row)
    for (int64_t o = 0; o < d.out_channels; ++o)
      m[size_t(transposed ? o * d.patch + row : row * d.out_channels + o)] =
          w[row * g.out_channels + group * d.out_channels + o];
  return m;
}

// Copies between the tile's [rows x out-channels] matrix and the output's
// positions [p0, p0 + rows), channels of `group`.
template <class T>
void copy_output_tile(const GroupDims& d, const ConvGeometry::Strides& out, int64_t group,
                      int64_t p0, int64_t rows, const T* from, T* to, bool to_matrix) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < d.out_channels; ++o) {
      const int64_t at = (group * d.out_channels + o) * out.channel + (p0 + r) * out.position;
      if (to_matrix)
        to[r * d.out_channels + o] = from[at];
      else
        to[at] = from[r * d.out_channels + o];
    }
  }
}

// Calls f(batch item, group, first row, rows) over every tile.
template <class F>
void for_each_tile(const ConvGeometry& g, const GroupDims& d, F&& f) {
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t group = 0; group < g.groups; ++group)
      for (int64_t p0 = 0; p0 < g.out_positions(); p0 += d.rows)
        f(b, group, p0, std::min(d.rows, g.out_positions() - p0));
}

}  // namespace

template <class T>
void forward(const ConvGeometry& g, const T* x, const T* w, T* y) {
  const GroupDims d = group_dims(g);
  const ConvGeometry::Strides in = g.input_strides();
  const ConvGeometry::Strides out = g.output_strides();
  std::vector<T> patches(size_t(d.rows * d.patch)), tile(size_t(d.rows * d.out_channels));
  std::vector<std::vector<T>> filters;
  for (int64_t group = 0; group < g.groups; ++group)
    filters.push_back(group_filter(g, d, w, group, false));
  for_each_tile(g, d, [&](int64_t b, int64_t group, int64_t p0, int64_t rows) {
    const T* xb = x + b * in.batch + group * d.in_channels * in.channel;
    gather_patches(g, d, in, xb, window_sources(g, p0, rows), rows, false, patches.data());
    if (d.patch == 0) {
      std::fill(tile.begin(), tile.end(), T(0));
    } else {
      gemm(patches.data(), filters[size_t(group)].data(), tile.data(), rows, d.out_channels,
           d.patch);
    }
    copy_output_tile(d, out, group, p0, rows, tile.data(), y + b * out.batch, false);
  });
}

template <class T>
void backward_input(const ConvGeometry& g, const T* dy, const T* w, T* dx) {
  const GroupDims d = group_dims(g);
  const ConvGeometry::Strides in = g.input_strides();
  const ConvGeometry::Strides out = g.output_strides();
  std::fill(dx, dx + g.batch * in.batch, T(0));
  if (d.patch == 0 || d.out_channels == 0) return;
  std::vector<T> patches(size_t(d.rows * d.patch)), tile(size_t(d.rows * d.out_channels));
  std::vector<std::vector<T>> filters;
  for (int64_t group = 0; group < g.groups; ++group)
    filters.push_back(group_filter(g, d, w, group, true));
  for_each_tile(g, d, [&](int64_t b, int64_t group, int64_t p0, int64_t rows) {
    copy_output_tile(d, out, group, p0, rows, dy + b * out.batch, tile.data(), true);
    gemm(tile.data(), filters[size_t(group)].data(), patches.data(), rows, d.patch, d.out_channels);
    T* dxb = dx + b * in.batch + group * d.in_channels * in.channel;
    scatter_patches(g, d, in, patches.data(), window_sources(g, p0, rows), rows, dxb);
  });
}

template <class T>
void backward_filter(const ConvGeometry& g, const T* x, const T* dy, T* dw) {
  const GroupDims d = group_dims(g);
  const ConvGeometry::Strides in = g.input_strides();
  const ConvGeometry::Strides out = g.output_strides();
  std::fill(dw, dw + d.patch * g.out_channels, T(0));
  std::vector<T> patches(size_t(d.rows * d.patch)), tile(size_t(d.rows * d.out_channels));
  std::vector<T> product(size_t(d.patch * d.out_channels));
  for_each_tile(g, d, [&](int64_t b, int64_t group, int64_t p0, int64_t rows) {
    if (d.patch == 0 || d.out_channels == 0) return;
    const T* xb = x + b * in.batch + group * d.in_channels * in.channel;
    gather_patches(g, d, in, xb, window_sources(g, p0, rows), rows, true, patches.data());
    copy_output_tile(d, out, group, p0, rows, dy + b * out.batch, tile.data(), true);
    gemm(patches.data(), tile.data(), product.data(), d.patch, d.out_channels, rows);
    for (int64_t row = 0; row < d.patch; ++row)
      for (int64_t o = 0; o < d.out_channels; ++o)
        dw[row * g.out_channels + group * d.out_channels + o] +=
            product[size_t(row * d.out_channels + o)];
  });
}

template <class T>
void apply_epilogue(const ConvGeometry& g, const ConvEpilogue& e, const T* bias, const T* residual,
                    T* y) {
  const ConvGeometry::Strides out = g.output_strides();
  const int64_t n = g.batch * out.batch;
  for (int64_t i = 0; i < n; ++i) {
    T v = y[i];
    if (e.bias) v = scalar::AddOp{}(v, bias[(i / out.channel) % g.out_channels]);
    if (e.residual) v = scalar::AddOp{}(v, residual[i]);
    if (e.activation == ConvEpilogue::Activation::relu) v = scalar::ReluOp{}(v);
    if (e.activation == ConvEpilogue::Activation::clip)
      v = scalar::MinimumOp{}(scalar::MaximumOp{}(v, T(e.lo)), T(e.hi));
    y[i] = v;
  }
}

#define AG_CONV_IM2COL(T)                                                        \
  template void forward<T>(const ConvGeometry&, const T*, const T*, T*);         \
  template void backward_input<T>(const ConvGeometry&, const T*, const T*, T*);  \
  template void backward_filter<T>(const ConvGeometry&, const T*, const T*, T*); \
  template void apply_epilogue<T>(const ConvGeometry&, const ConvEpilogue&, const T*, const T*, T*);
AG_CONV_IM2COL(float)
AG_CONV_IM2COL(double)
#undef AG_CONV_IM2COL

}  // namespace conv_im2col
}  // namespace ag::ops
