// Shapes: a list of dims, each known or unknown (`kUnknownDim`, printed
// `None`), or an unknown rank. Dims live inline (no allocation), which keeps
// the signature cache and the executor allocation-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

namespace ag {

inline constexpr int64_t kUnknownDim = -1;

class Shape {
 public:
  static constexpr int kMaxRank = 8;

  // A scalar: rank 0.
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::span<const int64_t> dims);
  static Shape unknown_rank();

  // -1 when the rank is unknown.
  int rank() const { return rank_; }
  bool has_unknown_rank() const { return rank_ < 0; }
  bool is_fully_defined() const;
  // The dim at `i`; negative `i` counts from the end.
  int64_t dim(int i) const { return dims_[i < 0 ? i + rank_ : i]; }
  int64_t operator[](int i) const { return dims_[i]; }
  void set_dim(int i, int64_t d) { dims_[i] = d; }
  void push_back(int64_t d);
  // The product of the dims, or kUnknownDim when one is unknown. Inline:
  // kernels and the executor ask for it on every op.
  int64_t num_elements() const {
    if (rank_ < 0) return kUnknownDim;
    int64_t n = 1;
    for (int i = 0; i < rank_; ++i) {
      if (dims_[i] == kUnknownDim) return kUnknownDim;
      n *= dims_[i];
    }
    return n;
  }

  const int64_t* begin() const { return dims_; }
  const int64_t* end() const { return dims_ + (rank_ < 0 ? 0 : rank_); }
  std::span<const int64_t> dims() const { return {begin(), end()}; }

  // TensorFlow's Python spelling: "(2, 3)", "(None,)", "()", "<unknown>".
  std::string to_string() const;
  // The spelling of TF's C++ error messages: "[2,3]", "[?,3]".
  std::string to_list_string() const;

  // Inline: the signature cache compares every argument's shape per call.
  friend bool operator==(const Shape& a, const Shape& b) {
    if (a.rank_ != b.rank_) return false;
    for (int i = 0; i < a.rank_; ++i) {
      if (a.dims_[i] != b.dims_[i]) return false;
    }
    return true;
  }
  // True when every value of this shape is also a value of `other`:
  // [2,3] <: [None,3] <: [None,None] <: <unknown>.
  bool is_subtype_of(const Shape& other) const;
  // True when some concrete shape is a value of both.
  bool is_compatible_with(const Shape& other) const;
  // The most specific shape both are subtypes of: dims that differ become
  // None; different ranks give an unknown rank.
  Shape most_specific_common_supertype(const Shape& other) const;
  size_t hash() const;

 private:
  int64_t dims_[kMaxRank] = {};
  int8_t rank_ = 0;
};

}  // namespace ag
