// The GEMM libraries of one build agree: float32 products on oneDNN and on
// OpenBLAS, each against a float64 product, through the kernel and through
// ag::matmul eagerly and traced. And the rules that pick the library for a
// CPU and warn of a generic OpenBLAS core.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "ops/gemm.h"

namespace {

using ag::ops::GemmLibrary;

// Restores the library the runtime chose when a test ends.
class GemmLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ag::ops::built_with_onednn())
      GTEST_SKIP() << "this runtime was built with AG_GEMM=openblas: there is one library";
    chosen_ = ag::ops::gemm_library();
  }
  void TearDown() override {
    if (ag::ops::built_with_onednn()) ag::ops::set_gemm_library(chosen_);
  }

 private:
  GemmLibrary chosen_ = GemmLibrary::openblas;
};

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

struct Dims {
  int64_t m, n, k;
};

// The largest |c - a·b| over c's elements, with a·b in float64.
double max_error(const std::vector<float>& a, const std::vector<float>& b,
                 const std::vector<float>& c, Dims d) {
  double worst = 0;
  for (int64_t i = 0; i < d.m; ++i) {
    for (int64_t j = 0; j < d.n; ++j) {
      double exact = 0;
      for (int64_t p = 0; p < d.k; ++p) exact += double(a[i * d.k + p]) * double(b[p * d.n + j]);
      worst = std::max(worst, std::abs(exact - double(c[i * d.n + j])));
    }
  }
  return worst;
}

TEST_F(GemmLibraryTest, OneDnnAndOpenBlasMatchAFloat64Product) {
  for (Dims d : {Dims{1, 1, 9}, Dims{3, 5, 7}, Dims{1, 300, 17}, Dims{300, 1, 17}, Dims{64, 64, 64},
                 Dims{33, 129, 257}, Dims{256, 512, 512}}) {
    std::vector<float> a = random_floats(size_t(d.m * d.k), 1);
    std::vector<float> b = random_floats(size_t(d.k * d.n), 2);
    // float32 sums of k products of values in [-1, 1]: a few ulps of k.
    const double tolerance = 4e-7 * double(d.k) + 1e-6;
    for (GemmLibrary library : {GemmLibrary::onednn, GemmLibrary::openblas}) {
      ag::ops::set_gemm_library(library);
      std::vector<float> c(size_t(d.m * d.n), NAN);
      ag::ops::gemm(a.data(), b.data(), c.data(), d.m, d.n, d.k);
      EXPECT_LE(max_error(a, b, c, d), tolerance)
          << (library == GemmLibrary::onednn ? "oneDNN" : "OpenBLAS") << " on " << d.m << "x" << d.k
          << " * " << d.k << "x" << d.n;
    }
  }
}

TEST_F(GemmLibraryTest, MatmulAgreesEagerAndTracedOnEachLibrary) {
  const ag::Shape sa{2, 40, 70}, sb{2, 70, 30};
  ag::Tensor a = ag::random_uniform(sa, -1.0, 1.0, ag::float32, 7);
  ag::Tensor b = ag::random_uniform(sb, -1.0, 1.0, ag::float32, 8);
  auto staged = ag::function([](ag::Tensor x, ag::Tensor y) { return ag::matmul(x, y); });
  std::vector<std::vector<float>> results;
  for (GemmLibrary library : {GemmLibrary::onednn, GemmLibrary::openblas}) {
    ag::ops::set_gemm_library(library);
    std::vector<float> eager = ag::matmul(a, b).to_vector<float>();
    EXPECT_EQ(staged(a, b).to_vector<float>(), eager) << "the graph runs the eager kernel";
    results.push_back(eager);
  }
  ASSERT_EQ(results[0].size(), results[1].size());
  for (size_t i = 0; i < results[0].size(); ++i)
    EXPECT_NEAR(results[0][i], results[1][i], 1e-4) << "element " << i;
}

TEST_F(GemmLibraryTest, EachLibraryRunsOnTheIntraOpThreadCount) {
  ag::Tensor a = ag::random_uniform({64, 64}, -1.0, 1.0, ag::float32, 3);
  for (GemmLibrary library : {GemmLibrary::onednn, GemmLibrary::openblas}) {
    ag::ops::set_gemm_library(library);
    for (int threads : {2, 1}) {
      ag::set_intra_op_threads(threads);
      ag::matmul(a, a);
      EXPECT_EQ(ag::ops::gemm_library_threads(), threads)
          << (library == GemmLibrary::onednn ? "oneDNN" : "OpenBLAS");
    }
  }
}

TEST(PreferredGemmLibrary, OneDnnUnlessOpenBlasUsesTheAvx2OfAnAvx2Cpu) {
  using ag::ops::preferred_gemm_library;
  EXPECT_EQ(preferred_gemm_library("Zen", true, false), GemmLibrary::openblas);
  EXPECT_EQ(preferred_gemm_library("Haswell", true, false), GemmLibrary::openblas);
  // A generic core, on any CPU.
  EXPECT_EQ(preferred_gemm_library("Prescott", true, false), GemmLibrary::onednn);
  EXPECT_EQ(preferred_gemm_library("Prescott", true, true), GemmLibrary::onednn);
  EXPECT_EQ(preferred_gemm_library("Prescott", false, false), GemmLibrary::onednn);
  // AVX-512: oneDNN's kernels outrun OpenBLAS's best.
  EXPECT_EQ(preferred_gemm_library("SkylakeX", true, true), GemmLibrary::onednn);
  EXPECT_EQ(preferred_gemm_library("Haswell", true, true), GemmLibrary::onednn);
}

TEST(OpenBlasCoreWarning, NamesTheCoreTypeForTheCpu) {
  EXPECT_EQ(ag::ops::openblas_core_warning("Prescott", true, true),
            "OpenBLAS runs its generic 'Prescott' kernels on this CPU, which has AVX-512, so its "
            "matrix products run several times below the machine's speed; start the program "
            "with OPENBLAS_CORETYPE=SkylakeX in its environment");
  EXPECT_NE(ag::ops::openblas_core_warning("Nehalem", true, false)
                .find("which has AVX2, so its matrix products run several times below the "
                      "machine's speed; start the program with OPENBLAS_CORETYPE=Haswell"),
            std::string::npos);
}

TEST(OpenBlasCoreWarning, SilentWhenTheCoreUsesWhatTheCpuHas) {
  EXPECT_EQ(ag::ops::openblas_core_warning("Zen", true, false), "");
  EXPECT_EQ(ag::ops::openblas_core_warning("Haswell", true, false), "");
  EXPECT_EQ(ag::ops::openblas_core_warning("SkylakeX", true, true), "");
  // A CPU without AVX2 has nothing better for OpenBLAS to use.
  EXPECT_EQ(ag::ops::openblas_core_warning("Prescott", false, false), "");
}

}  // namespace
