// String tensors (tf.string): constants, reading their values back, and the
// ops of tf.strings. Elements are byte strings; docs/strings.md lists what
// exists and how each maps to TensorFlow.
//
//   ag::Tensor a = ag::constant("a");               // dtype=string, shape=()
//   std::cout << a + a;                              // ag::Tensor(b'aa', shape=(), dtype=string)
//   ag::strings::to_number(ag::constant({"1", "2.5"}), ag::float32);  // [1. 2.5]
//
// `+` on two string tensors joins them, `==` and `!=` compare them (bool);
// reshape, transpose, expand_dims, squeeze, broadcast_to, concat, stack,
// gather, slice, tile, reverse, where and identity move them as any dtype.
// Other ops reject them with an error naming ag::strings::to_number.
#pragma once

#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ag/tensor.h"

namespace ag {

// A nested initializer list of strings, any depth: the strings' form of
// NestedValues. A string literal, std::string or std::string_view is a leaf.
class NestedStrings {
 public:
  // A string literal, `const char*`, std::string or std::string_view. A
  // template, so that no braced list of numbers ({1, 2}) makes a string.
  template <class S>
    requires std::convertible_to<const S&, std::string_view> && (!std::same_as<S, std::nullptr_t>)
  NestedStrings(const S& s) : leaf_(std::string_view(s)), is_leaf_(true) {}
  NestedStrings(std::initializer_list<NestedStrings> list) : children_(list) {}
  // The shape and the leaves in row-major order; throws on ragged nesting.
  void flatten(Shape& shape, std::vector<std::string>& leaves) const;

 private:
  void flatten_at(int depth, const Shape& shape, std::vector<std::string>& leaves) const;
  std::string leaf_;
  bool is_leaf_ = false;
  std::vector<NestedStrings> children_;
};

namespace api {
// ag::constant("a") is a scalar string; ag::constant({"a", "bc"}) a vector.
Tensor constant(const NestedStrings& values);
// The strings in row-major order, of `shape`.
Tensor constant(const std::vector<std::string>& values, Shape shape);
}  // namespace api

namespace strings {

// The strings of an eager string tensor, in row-major order.
std::vector<std::string> to_vector(const Tensor& t);
// The single string of a scalar (or size-1) string tensor.
std::string item(const Tensor& t);

// tf.strings.join([a, b, ...], separator): elementwise, broadcasting.
Tensor join(const std::vector<Tensor>& inputs, std::string_view separator = "",
            CallSite site = CallSite::current());
// tf.strings.length (bytes), as int32.
Tensor length(const Tensor& input, CallSite site = CallSite::current());
// tf.strings.substr: `len` bytes from `pos` (negative: from the end), fewer
// where the string ends first, the rest of the string for a negative `len`.
// A pos past either end is an error naming the string.
Tensor substr(const Tensor& input, int64_t pos, int64_t len, CallSite site = CallSite::current());
// The same with int32 or int64 tensors `pos` and `len` of one shape: the
// input's shape (one cut per string), a shape that broadcasts against it
// (one cut per column, say), or scalars; the result has the broadcast shape.
Tensor substr(const Tensor& input, const Tensor& pos, const Tensor& len,
              CallSite site = CallSite::current());
// tf.strings.as_string: numbers as TensorFlow writes them (%d, %f, true/false).
Tensor as_string(const Tensor& input, CallSite site = CallSite::current());
// tf.strings.to_number: float32, float64, int32 or int64; a string that is
// not a number is an error naming it.
Tensor to_number(const Tensor& input, DType out_type = DType::float32,
                 CallSite site = CallSite::current());
// tf.strings.split of a scalar or a vector, made dense: a scalar gives the
// 1-D pieces; a vector of n strings gives [n, most pieces], rows padded
// with "" (TensorFlow gives a RaggedTensor). An empty `sep` splits at runs
// of whitespace.
Tensor split(const Tensor& input, std::string_view sep = "", CallSite site = CallSite::current());
// tf.strings.reduce_join: the strings along `axes` (empty: all) joined with
// `separator`, in row-major order.
Tensor reduce_join(const Tensor& input, std::vector<int64_t> axes = {}, bool keepdims = false,
                   std::string_view separator = "", CallSite site = CallSite::current());

}  // namespace strings
}  // namespace ag
