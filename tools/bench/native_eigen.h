// The dense workload in Eigen compiled for this machine's CPU (-march=native),
// the best Eigen does here: a hand row of runtime_bench.
#pragma once

// out[rows x cols] = x[rows x inner] * w[inner x cols] + bias[cols], row-major.
void dense_eigen_native(const float* x, const float* w, const float* bias, float* out, int rows,
                        int inner, int cols);
