// The string ops' kernels (ops.def, "String ops"; docs/strings.md). Their
// elements are handles on interned bytes (core/string_pool.h): a kernel
// reads the bytes through string_of and writes each result through intern.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <type_traits>

#include "ag/error.h"
#include "ops/broadcast.h"
#include "ops/kernels.h"
#include "ops/strings.h"

namespace ag::ops {

using detail::intern;
using detail::string_of;
using detail::StringHandle;

namespace {

const StringHandle* strings_in(const KernelContext& ctx, size_t i) {
  return static_cast<const StringHandle*>(ctx.inputs[i].data);
}

// out[o] = f(a[i], b[j]) over the broadcast of the two string inputs.
template <class Out, class F>
void binary_strings(const KernelContext& ctx, F f) {
  const StringHandle* a = strings_in(ctx, 0);
  const StringHandle* b = strings_in(ctx, 1);
  Out* out = static_cast<Out*>(ctx.out);
  BroadcastIndexer<2> idx(*ctx.out_shape, {ctx.inputs[0].shape, ctx.inputs[1].shape});
  idx.for_each_row([&](int64_t o, const int64_t* in, const int64_t* step, int64_t len) {
    for (int64_t j = 0; j < len; ++j) {
      out[o + j] = f(string_of(a[in[0] + j * step[0]]), string_of(b[in[1] + j * step[1]]));
    }
  });
}

// TensorFlow's as_string with its defaults: %d for integers, %f (six
// decimals) for floats, true/false for bool.
template <class T>
std::string number_text(T v) {
  char buf[512];
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_floating_point_v<T>) {
    std::snprintf(buf, sizeof buf, "%f", double(v));
  } else {
    std::snprintf(buf, sizeof buf, "%" PRId64, int64_t(v));
  }
  return buf;
}

// The number `text` spells, whole (surrounding whitespace and one leading
// '+' allowed, as TensorFlow's parsers do), or an error naming the element.
template <class T>
T parse_number(std::string_view text, int64_t index, std::string_view op, DType dtype) {
  std::string_view t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  if (t.size() > 1 && t.front() == '+' && t[1] != '-') t.remove_prefix(1);
  T value{};
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size()) {
    const bool overflow = ec == std::errc::result_out_of_range;
    throw InvalidArgumentError(std::string(op) + ": cannot convert " + detail::bytes_literal(text) +
                               " (element " + std::to_string(index) + ") to " +
                               std::string(dtype_name(dtype)) +
                               (overflow ? ": out of its range" : ": not a number") +
                               "; clean the strings first, or read them as another dtype");
  }
  return value;
}

// Element i of an int32 or int64 input, as int64.
int64_t integer_at(const KernelInput& in, int64_t i) {
  if (in.dtype == DType::int32) return static_cast<const int32_t*>(in.data)[i];
  return static_cast<const int64_t*>(in.data)[i];
}

// tf.strings.substr of one string: `len` bytes from `pos` (from the end when
// negative), fewer where the string ends first, all the rest for a negative
// `len`. A pos past either end is an error naming output element `index`.
std::string_view substring(const KernelContext& ctx, std::string_view s, int64_t pos, int64_t len,
                           int64_t index) {
  const auto size = int64_t(s.size());
  if (pos > size || pos < -size) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": pos " + std::to_string(pos) +
                               " is out of range for " + detail::bytes_literal(s) + " (element " +
                               std::to_string(index) + ", of " + std::to_string(size) +
                               " bytes): pos must lie in [-length, length] of its string; "
                               "keep it within ag::strings::length of the input");
  }
  const int64_t from = pos < 0 ? pos + size : pos;
  const int64_t count = len < 0 ? size - from : std::min(len, size - from);
  return s.substr(size_t(from), size_t(count));
}

}  // namespace

void kernel_string_join(const KernelContext& ctx) {
  binary_strings<StringHandle>(ctx, [](std::string_view a, std::string_view b) {
    std::string joined;
    joined.reserve(a.size() + b.size());
    joined.append(a).append(b);
    return intern(joined);
  });
}

void kernel_string_equal(const KernelContext& ctx) {
  binary_strings<bool>(ctx, [](std::string_view a, std::string_view b) { return a == b; });
}

void kernel_string_not_equal(const KernelContext& ctx) {
  binary_strings<bool>(ctx, [](std::string_view a, std::string_view b) { return a != b; });
}

void kernel_string_length(const KernelContext& ctx) {
  const StringHandle* x = strings_in(ctx, 0);
  auto* out = static_cast<int32_t*>(ctx.out);
  for (int64_t i = 0; i < ctx.out_shape->num_elements(); ++i)
    out[i] = int32_t(string_of(x[i]).size());
}

void kernel_substr(const KernelContext& ctx) {
  const StringHandle* x = strings_in(ctx, 0);
  auto* out = static_cast<StringHandle*>(ctx.out);
  // pos and len share one shape, so one offset reads both.
  BroadcastIndexer<2> idx(*ctx.out_shape, {ctx.inputs[0].shape, ctx.inputs[1].shape});
  idx.for_each_row([&](int64_t o, const int64_t* in, const int64_t* step, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t at = in[1] + j * step[1];
      out[o + j] =
          intern(substring(ctx, string_of(x[in[0] + j * step[0]]), integer_at(ctx.inputs[1], at),
                           integer_at(ctx.inputs[2], at), o + j));
    }
  });
}

void kernel_as_string(const KernelContext& ctx) {
  auto* out = static_cast<StringHandle*>(ctx.out);
  visit_dtype(ctx.inputs[0].dtype, [&](auto zero) {
    using T = decltype(zero);
    const T* x = ctx.input_data<T>(0);
    for (int64_t i = 0; i < ctx.out_shape->num_elements(); ++i) out[i] = intern(number_text(x[i]));
  });
}

void kernel_string_to_number(const KernelContext& ctx) {
  const StringHandle* x = strings_in(ctx, 0);
  visit_dtype(ctx.out_dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, bool>) {
      throw InternalError("string_to_number to bool");
    } else {
      T* out = static_cast<T*>(ctx.out);
      for (int64_t i = 0; i < ctx.out_shape->num_elements(); ++i)
        out[i] = parse_number<T>(string_of(x[i]), i, ctx.op_name, ctx.out_dtype);
    }
  });
}

std::vector<std::string_view> split_string(std::string_view s, std::string_view sep) {
  std::vector<std::string_view> pieces;
  if (sep.empty()) {
    auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && space(s[i])) ++i;
      const size_t start = i;
      while (i < s.size() && !space(s[i])) ++i;
      if (i > start) pieces.push_back(s.substr(start, i - start));
    }
    return pieces;
  }
  if (s.empty()) return pieces;
  size_t start = 0;
  for (size_t at = s.find(sep); at != std::string_view::npos; at = s.find(sep, start)) {
    pieces.push_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  pieces.push_back(s.substr(start));
  return pieces;
}

int64_t string_split_width(const StringHandle* strings, int64_t n, StringHandle sep) {
  size_t width = 0;
  for (int64_t i = 0; i < n; ++i)
    width = std::max(width, split_string(string_of(strings[i]), string_of(sep)).size());
  return int64_t(width);
}

void kernel_string_split(const KernelContext& ctx) {
  const StringHandle* x = strings_in(ctx, 0);
  const std::string_view sep = string_of(*strings_in(ctx, 1));
  auto* out = static_cast<StringHandle*>(ctx.out);
  const int64_t n = ctx.inputs[0].shape->num_elements();
  const int64_t width = ctx.out_shape->dims().back();
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<std::string_view> pieces = split_string(string_of(x[i]), sep);
    for (int64_t j = 0; j < width; ++j)
      out[i * width + j] = size_t(j) < pieces.size() ? intern(pieces[size_t(j)]) : nullptr;
  }
}

void kernel_reduce_join(const KernelContext& ctx) {
  const Shape& in_shape = *ctx.inputs[0].shape;
  const int rank = in_shape.rank();
  const std::string_view separator = string_of(*strings_in(ctx, 1));
  // Each input axis's step in the output: 0 along a reduced axis.
  std::vector<bool> reduced(size_t(rank), ctx.attrs->ints.empty());
  for (int64_t a : ctx.attrs->ints) reduced[size_t(a < 0 ? a + rank : a)] = true;
  std::vector<int64_t> out_step(size_t(rank), 0);
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (reduced[size_t(d)]) continue;
    out_step[size_t(d)] = stride;
    stride *= in_shape[d];
  }
  // Row-major order over the input visits each output's strings in order.
  std::vector<std::string> joined(size_t(ctx.out_shape->num_elements()));
  std::vector<bool> started(joined.size(), false);
  const StringHandle* x = strings_in(ctx, 0);
  std::vector<int64_t> index(size_t(rank), 0);
  for (int64_t i = 0; i < in_shape.num_elements(); ++i) {
    int64_t o = 0;
    for (int d = 0; d < rank; ++d) o += index[size_t(d)] * out_step[size_t(d)];
    if (started[size_t(o)]) joined[size_t(o)] += separator;
    started[size_t(o)] = true;
    joined[size_t(o)] += string_of(x[i]);
    for (int d = rank - 1; d >= 0 && ++index[size_t(d)] == in_shape[d]; --d) index[size_t(d)] = 0;
  }
  auto* out = static_cast<StringHandle*>(ctx.out);
  for (size_t o = 0; o < joined.size(); ++o) out[o] = intern(joined[o]);
}

}  // namespace ag::ops
