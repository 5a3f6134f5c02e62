#include "ag/shape.h"

#include <string>

#include "ag/error.h"

namespace ag {

Shape::Shape(std::initializer_list<int64_t> dims)
    : Shape(std::span<const int64_t>(dims.begin(), dims.size())) {}

Shape::Shape(std::span<const int64_t> dims) {
  if (dims.size() > size_t(kMaxRank)) {
    throw InvalidArgumentError("shape of rank " + std::to_string(dims.size()) +
                               " exceeds the maximum rank " + std::to_string(kMaxRank));
  }
  rank_ = int8_t(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < kUnknownDim) {
      throw InvalidArgumentError("dimension " + std::to_string(i) + " of a shape is negative (" +
                                 std::to_string(dims[i]) + ")");
    }
    dims_[i] = dims[i];
  }
}

Shape Shape::unknown_rank() {
  Shape s;
  s.rank_ = -1;
  return s;
}

bool Shape::is_fully_defined() const {
  if (rank_ < 0) return false;
  for (int i = 0; i < rank_; ++i) {
    if (dims_[i] == kUnknownDim) return false;
  }
  return true;
}

void Shape::push_back(int64_t d) {
  if (rank_ < 0) throw InvalidArgumentError("cannot append a dim to a shape of unknown rank");
  if (rank_ >= kMaxRank) {
    throw InvalidArgumentError("shape exceeds the maximum rank " + std::to_string(kMaxRank));
  }
  dims_[rank_++] = d;
}

std::string Shape::to_string() const {
  if (rank_ < 0) return "<unknown>";
  std::string s = "(";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ", ";
    s += dims_[i] == kUnknownDim ? "None" : std::to_string(dims_[i]);
  }
  if (rank_ == 1) s += ",";
  return s + ")";
}

std::string Shape::to_list_string() const {
  if (rank_ < 0) return "<unknown>";
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ",";
    s += dims_[i] == kUnknownDim ? "?" : std::to_string(dims_[i]);
  }
  return s + "]";
}

bool Shape::is_subtype_of(const Shape& other) const {
  if (other.rank_ < 0) return true;
  if (rank_ != other.rank_) return false;
  for (int i = 0; i < rank_; ++i) {
    if (other.dims_[i] != kUnknownDim && other.dims_[i] != dims_[i]) return false;
  }
  return true;
}

bool Shape::is_compatible_with(const Shape& other) const {
  if (rank_ < 0 || other.rank_ < 0) return true;
  if (rank_ != other.rank_) return false;
  for (int i = 0; i < rank_; ++i) {
    if (dims_[i] != kUnknownDim && other.dims_[i] != kUnknownDim && dims_[i] != other.dims_[i]) {
      return false;
    }
  }
  return true;
}

Shape Shape::most_specific_common_supertype(const Shape& other) const {
  if (rank_ < 0 || rank_ != other.rank_) return unknown_rank();
  Shape s = *this;
  for (int i = 0; i < rank_; ++i) {
    if (dims_[i] != other.dims_[i]) s.dims_[i] = kUnknownDim;
  }
  return s;
}

size_t Shape::hash() const {
  uint64_t h = 0xcbf29ce484222325ull ^ uint64_t(uint8_t(rank_));
  for (int i = 0; i < rank_; ++i) {
    h = (h ^ uint64_t(dims_[i])) * 0x100000001b3ull;
  }
  return size_t(h);
}

}  // namespace ag
