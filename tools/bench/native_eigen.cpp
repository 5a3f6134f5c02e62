// Built with -march=native (tools/bench/CMakeLists.txt): Eigen picks its
// kernels at compile time, so this is the only file that sees the CPU.
#include "native_eigen.h"

#include <Eigen/Core>

void dense_eigen_native(const float* x, const float* w, const float* bias, float* out, int rows,
                        int inner, int cols) {
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const RowMatrix> mx(x, rows, inner), mw(w, inner, cols);
  Eigen::Map<const Eigen::RowVectorXf> mb(bias, cols);
  Eigen::Map<RowMatrix> mo(out, rows, cols);
  mo.noalias() = mx * mw;
  mo.rowwise() += mb;
}
