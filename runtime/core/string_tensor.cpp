// String constants, and reading string tensors' values (ag/strings.h).
#include <cstring>
#include <string>
#include <vector>

#include "ag/strings.h"
#include "core/nested_list.h"
#include "core/string_pool.h"
#include "core/tensor_impl.h"

namespace ag {

void NestedStrings::flatten(Shape& shape, std::vector<std::string>& leaves) const {
  shape = Shape{};
  leaves.clear();
  // The shape along the first path; flatten_at checks every other path.
  const NestedStrings* node = this;
  while (!node->is_leaf_) {
    shape.push_back(int64_t(node->children_.size()));
    if (node->children_.empty()) break;
    node = &node->children_.front();
  }
  flatten_at(0, shape, leaves);
}

void NestedStrings::flatten_at(int depth, const Shape& shape,
                               std::vector<std::string>& leaves) const {
  detail::check_nested_node(depth, shape, is_leaf_, children_.size(), "a string");
  if (is_leaf_) {
    leaves.push_back(leaf_);
    return;
  }
  for (const auto& c : children_) c.flatten_at(depth + 1, shape, leaves);
}

namespace api {

Tensor constant(const NestedStrings& values) {
  Shape shape;
  std::vector<std::string> leaves;
  values.flatten(shape, leaves);
  return constant(leaves, shape);
}

Tensor constant(const std::vector<std::string>& values, Shape shape) {
  if (!shape.is_fully_defined() || shape.num_elements() != int64_t(values.size())) {
    throw InvalidArgumentError("constant: " + std::to_string(values.size()) +
                               " strings do not fill shape " + shape.to_string());
  }
  Tensor t = detail::make_eager(DType::string, shape);
  auto* data = static_cast<detail::StringHandle*>(t.raw_mutable_data());
  for (size_t i = 0; i < values.size(); ++i) data[i] = detail::intern(values[i]);
  return t;
}

}  // namespace api

namespace strings {

std::vector<std::string> to_vector(const Tensor& t) {
  if (t.defined() && t.dtype() != DType::string) {
    throw TypeError("ag::strings::to_vector needs a string tensor, got " +
                    std::string(dtype_name(t.dtype())) + "; use t.to_vector<T>() for numbers");
  }
  const auto* data = static_cast<const detail::StringHandle*>(t.raw_data());
  std::vector<std::string> out;
  out.reserve(size_t(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) out.emplace_back(detail::string_of(data[i]));
  return out;
}

std::string item(const Tensor& t) {
  if (t.defined() && !t.is_symbolic() && t.num_elements() != 1) {
    throw InvalidArgumentError(
        "ag::strings::item needs a tensor with exactly one element, got shape " +
        t.shape().to_string());
  }
  return to_vector(t).front();
}

}  // namespace strings
}  // namespace ag
