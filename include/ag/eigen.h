// Conversions between ag::Tensor and Eigen matrices (copies).
#pragma once

#include <Eigen/Core>

#include "ag/tensor.h"

namespace ag::api {

// A rank-2 tensor with the matrix's values (a copy).
template <class Derived>
Tensor from_eigen(const Eigen::MatrixBase<Derived>& m) {
  using Scalar = typename Derived::Scalar;
  Tensor t = empty(Shape{int64_t(m.rows()), int64_t(m.cols())}, dtype_v<Scalar>);
  Eigen::Map<Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> out(
      t.mutable_data<Scalar>(), m.rows(), m.cols());
  out = m;
  return t;
}

// A row-major Eigen matrix with the tensor's values (a copy). Rank 1 gives a
// single row; rank 0 a 1x1 matrix.
template <class Scalar>
Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> to_eigen(const Tensor& t) {
  if (t.rank() > 2) {
    throw InvalidArgumentError("to_eigen: needs a tensor of rank <= 2, got shape " +
                               t.shape().to_string());
  }
  int64_t rows = t.rank() == 2 ? t.shape()[0] : 1;
  int64_t cols = t.rank() == 0 ? 1 : t.shape()[t.rank() - 1];
  std::vector<Scalar> values = t.to_vector<Scalar>();
  return Eigen::Map<Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      values.data(), rows, cols);
}

}  // namespace ag::api
