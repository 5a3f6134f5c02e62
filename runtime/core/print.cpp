// Printing, as NumPy/TensorFlow show values:
//   ag::Tensor([1 2 3], shape=(3,), dtype=int32)
//   ag::Tensor(
//   [[1. 2.]
//    [3. 4.]], shape=(2, 2), dtype=float32)
// Floats use the shortest text that reads back to the same value, with at
// most 8 fractional digits; whole numbers end in "." as in NumPy. Tensors of
// more than 1000 elements show 3 items at each edge of each axis ("...").
// Strings print as TensorFlow prints them, as Python bytes: b'aa'.
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "ag/tensor.h"
#include "core/string_pool.h"
#include "core/tensor_impl.h"

namespace ag {
namespace {

constexpr int64_t kSummarizeThreshold = 1000;
constexpr int64_t kEdgeItems = 3;

template <class T>
std::string format_float(T v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of("e") != std::string::npos) return s;
  auto dot = s.find('.');
  if (dot == std::string::npos) return s + ".";
  if (s.size() - dot - 1 > 8) {
    res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 8);
    s.assign(buf, res.ptr);
    while (s.back() == '0') s.pop_back();
  }
  return s;
}

// A float16 or bfloat16 as NumPy prints it: the fewest significant digits
// that read back to the same bits (0.1, not float32's 0.09997559).
template <class H>
std::string format_small_float(H x) {
  const float f = x;
  if (std::isnan(f) || std::isinf(f)) return format_float(f);
  char buf[64];
  for (int digits = 1; digits < 9; ++digits) {
    auto res =
        std::to_chars(buf, buf + sizeof buf, double(f), std::chars_format::scientific, digits - 1);
    double back = 0;
    std::from_chars(buf, res.ptr, back);
    if (H(back).bits == x.bits) return format_float(back);
  }
  return format_float(f);
}

std::string format_element(const void* data, DType dtype, int64_t i) {
  if (dtype == DType::string)
    return detail::bytes_literal(
        detail::string_of(static_cast<const detail::StringHandle*>(data)[i]));
  return visit_storage_dtype(dtype, [&](auto v) -> std::string {
    using T = decltype(v);
    T x = static_cast<const T*>(data)[i];
    if constexpr (std::is_same_v<T, bool>) {
      return x ? "True" : "False";
    } else if constexpr (std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>) {
      return format_small_float(x);
    } else if constexpr (std::is_floating_point_v<T>) {
      return format_float(x);
    } else {
      return std::to_string(x);
    }
  });
}

struct Formatter {
  const void* data;
  DType dtype;
  const Shape& shape;
  int64_t edge;  // -1: show everything
  bool pad;      // align columns as NumPy does
  std::vector<int64_t> strides;
  size_t int_width = 0, frac_width = 0;

  bool shown(int axis, int64_t i) const {
    return edge < 0 || shape[axis] <= 2 * edge || i < edge || i >= shape[axis] - edge;
  }

  // Visits the shown elements.
  template <class F>
  void for_each_shown(int axis, int64_t offset, F&& f) const {
    // (Also past kMaxRank, which no shape reaches: GCC's -O3 inlining of this
    // recursion otherwise warns of a read past the dims.)
    if (axis == shape.rank() || axis >= Shape::kMaxRank) return f(offset);
    for (int64_t i = 0; i < shape[axis]; ++i) {
      if (shown(axis, i)) for_each_shown(axis + 1, offset + i * strides[axis], f);
    }
  }

  std::string cell(int64_t offset) const {
    std::string s = format_element(data, dtype, offset);
    if (!pad) return s;
    auto dot = s.find('.');
    size_t ip = dot == std::string::npos ? s.size() : dot;
    size_t fp = dot == std::string::npos ? 0 : s.size() - dot;
    return std::string(int_width - ip, ' ') + s + std::string(frac_width - fp, ' ');
  }

  void body(int axis, int64_t offset, std::string& out) const {
    if (axis == shape.rank()) {
      out += cell(offset);
      return;
    }
    out += '[';
    bool skipped = false;
    bool first = true;
    for (int64_t i = 0; i < shape[axis]; ++i) {
      if (!shown(axis, i)) {
        if (!skipped) {
          // NumPy separates rows of rank-k blocks by k-1 blank lines.
          out += axis + 1 == shape.rank() ? " ..."
                                          : std::string(size_t(shape.rank() - axis - 1), '\n') +
                                                std::string(size_t(axis) + 1, ' ') + "...";
          skipped = true;
        }
        continue;
      }
      if (!first) {
        if (axis + 1 == shape.rank()) {
          out += ' ';
        } else {
          out += std::string(size_t(shape.rank() - axis - 1), '\n') +
                 std::string(size_t(axis) + 1, ' ');
        }
      } else if (skipped) {
        out += ' ';
      }
      first = false;
      body(axis + 1, offset + i * strides[axis], out);
    }
    out += ']';
  }

  std::string run() {
    strides.assign(size_t(shape.rank()), 1);
    for (int a = shape.rank() - 2; a >= 0; --a)
      strides[size_t(a)] = strides[size_t(a) + 1] * shape[a + 1];
    if (pad) {
      for_each_shown(0, 0, [&](int64_t off) {
        std::string s = format_element(data, dtype, off);
        auto dot = s.find('.');
        int_width = std::max(int_width, dot == std::string::npos ? s.size() : dot);
        frac_width = std::max(frac_width, dot == std::string::npos ? 0 : s.size() - dot);
      });
    }
    std::string out;
    body(0, 0, out);
    return out;
  }
};

std::string format_values(const Tensor& t, int64_t edge, bool pad) {
  const Shape& shape = t.shape();
  if (shape.num_elements() == 0) return "[]";
  if (edge < 0 && shape.num_elements() > kSummarizeThreshold) edge = kEdgeItems;
  Formatter f{t.raw_data(), t.dtype(), shape, edge, pad, {}, 0, 0};
  return f.run();
}

}  // namespace

std::string Tensor::values_string(int64_t edge_items) const {
  if (!defined()) return "<undefined>";
  return format_values(*this, edge_items, /*pad=*/false);
}

std::string Tensor::to_string() const {
  if (!defined()) return "ag::Tensor(<undefined>)";
  std::string tail =
      ", shape=" + shape().to_string() + ", dtype=" + std::string(dtype_name(dtype())) + ")";
  if (is_symbolic()) return "ag::Tensor(\"" + detail::symbolic_name(*impl_) + "\"" + tail;
  // Strings are not aligned, as NumPy shows arrays of bytes: [b'a' b'bc'].
  std::string values = format_values(*this, -1, /*pad=*/dtype() != DType::string);
  bool multiline = values.find('\n') != std::string::npos;
  return "ag::Tensor(" + std::string(multiline ? "\n" : "") + values + tail;
}

}  // namespace ag
