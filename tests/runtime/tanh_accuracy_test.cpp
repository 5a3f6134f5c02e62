// float32 tanh (ops/fast_tanh.h, scalar::TanhOp): its error against tanh in
// double over a dense sweep of the floats, its special values, and that every
// way the runtime applies it (the eager kernel's loop, a vectorised loop,
// scalar and flat steps, fused steps, a staged loop) gives the same bits for
// the same element.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ag/ag.h"
#include "exec/plan.h"
#include "graph/graph.h"
#include "ops/fast_tanh.h"
#include "ops/op_registry.h"
#include "passes/passes.h"

namespace ag {
namespace {

using ops::fast_tanh;

constexpr float kInf = std::numeric_limits<float>::infinity();

// The error of `got` against the exact value, in units of the spacing of
// floats at the exact value rounded to float (below 1 for results that round
// to 1).
double ulp_error(float got, double exact) {
  float rounded = std::fabs(float(exact));
  double spacing = rounded == 1.0f ? std::ldexp(1.0, -24)
                                   : double(std::nextafter(rounded, kInf)) - double(rounded);
  return std::fabs(double(got) - exact) / spacing;
}

uint32_t bits(float x) {
  return std::bit_cast<uint32_t>(x);
}

// The scalar kernel, as scalar and flat steps call it: one element per call,
// through a function pointer, so never vectorised.
float scalar_kernel_tanh(float x) {
  static const ops::ScalarKernelFn kernel = ops::scalar_kernel(ops::OpId::Tanh, float32, float32);
  const void* in[] = {&x};
  float y;
  kernel(in, &y);
  return y;
}

// Every 127th bit pattern of the non-negative finite floats (about 17 million),
// and their negations: at most 1.05 ULP, and odd to the bit. (Every float
// once, outside the tests: at most 1.0491 ULP, at 0x1.b6b9p-1.)
TEST(TanhAccuracy, WithinOnePointZeroFiveUlpOverADenseSweep) {
  double worst = 0;
  float worst_at = 0;
  int odd_failures = 0;
  for (uint64_t b = 0; b < bits(kInf); b += 127) {
    float x = std::bit_cast<float>(uint32_t(b));
    float y = fast_tanh(x);
    double error = ulp_error(y, std::tanh(double(x)));
    if (error > worst) {
      worst = error;
      worst_at = x;
    }
    if (bits(fast_tanh(-x)) != bits(-y)) ++odd_failures;
  }
  EXPECT_LE(worst, 1.05) << "at " << std::hexfloat << worst_at;
  EXPECT_GT(worst, 0.5) << "the sweep should include results that are not correctly rounded";
  EXPECT_EQ(odd_failures, 0);
}

// fast_tanh_one, which the executor's scalar and flat steps call, computes
// only the formula an element takes: the same bits as fast_tanh, over every
// 61st bit pattern (both signs, infinities and NaNs included) and every
// float around the switch.
TEST(TanhAccuracy, OneElementAtATimeGivesTheSameBits) {
  int differ = 0;
  for (uint64_t b = 0; b <= 0xffffffffu; b += 61) {
    float x = std::bit_cast<float>(uint32_t(b));
    if (bits(ops::fast_tanh_one(x)) != bits(fast_tanh(x))) ++differ;
  }
  for (float x = 0.8f; x <= 0.95f; x = std::nextafter(x, kInf))
    if (bits(ops::fast_tanh_one(x)) != bits(fast_tanh(x))) ++differ;
  for (float x : {kInf, -kInf, std::numeric_limits<float>::quiet_NaN(), 0.875f, -0.875f})
    if (bits(ops::fast_tanh_one(x)) != bits(fast_tanh(x))) ++differ;
  EXPECT_EQ(differ, 0);
}

// Around 0.875, where the formula changes: every float in [0.75, 1], within
// the bound and never decreasing.
TEST(TanhAccuracy, MonotoneAndAccurateWhereTheFormulaChanges) {
  float previous = fast_tanh(0.75f);
  for (float x = 0.75f; x <= 1.0f; x = std::nextafter(x, kInf)) {
    float y = fast_tanh(x);
    ASSERT_LE(ulp_error(y, std::tanh(double(x))), 1.05) << std::hexfloat << x;
    ASSERT_GE(y, previous) << std::hexfloat << x;
    previous = y;
  }
}

TEST(TanhAccuracy, SpecialValues) {
  // Zeros keep their sign; subnormals and tiny normals return themselves.
  EXPECT_EQ(bits(fast_tanh(0.0f)), bits(0.0f));
  EXPECT_EQ(bits(fast_tanh(-0.0f)), bits(-0.0f));
  for (float tiny : {std::numeric_limits<float>::denorm_min(), 1e-40f,
                     std::numeric_limits<float>::min(), 1e-10f, 0x1p-13f}) {
    EXPECT_EQ(fast_tanh(tiny), tiny) << tiny;
    EXPECT_EQ(fast_tanh(-tiny), -tiny) << tiny;
  }
  // tanh rounds to 1 above 0x1.205966p+3 (9.011): exactly ±1 there, up to
  // the largest float and infinity; just below, the float under 1.
  const float last_below_one = 0x1.205966p+3f;
  EXPECT_EQ(fast_tanh(last_below_one), std::nextafter(1.0f, 0.0f));
  EXPECT_EQ(std::tanh(double(last_below_one)) < 1 - 0x1p-25, true);
  for (float big : {std::nextafter(last_below_one, kInf), 9.5f, 10.0f, 10.5f, 88.8f, 1e20f,
                    std::numeric_limits<float>::max(), kInf}) {
    EXPECT_EQ(fast_tanh(big), 1.0f) << big;
    EXPECT_EQ(fast_tanh(-big), -1.0f) << big;
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(fast_tanh(nan)));
  EXPECT_TRUE(std::isnan(fast_tanh(-nan)));
  EXPECT_TRUE(std::isnan(fast_tanh(std::bit_cast<float>(0x7f800001u))));  // a signalling NaN
}

// Inputs over the whole range: special values, then values spread over
// [-12, 12] and over the binades from 2^-30 to 2^4, both signs.
std::vector<float> mixed_inputs(size_t n) {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          kInf,
                          -kInf,
                          std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::denorm_min(),
                          0.875f,
                          -0.875f,
                          std::nextafter(0.875f, 0.0f),
                          9.02f,
                          -1e30f};
  for (size_t i = 0; v.size() < n; ++i) {
    float t = float(i % 997) / 997.0f;
    float sign = i % 2 ? -1.0f : 1.0f;
    v.push_back(i % 3 ? sign * (24.0f * t - 12.0f) : sign * std::ldexp(1.0f + t, int(i % 35) - 30));
  }
  return v;
}

void expect_same_bits(const std::vector<float>& expected, const float* actual,
                      const std::string& what) {
  int differences = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    bool both_nan = std::isnan(expected[i]) && std::isnan(actual[i]);
    if (bits(expected[i]) != bits(actual[i]) && !both_nan) {
      if (++differences <= 5) {
        ADD_FAILURE() << what << ": element " << i << ": " << std::hexfloat << expected[i]
                      << " against " << actual[i];
      }
    }
  }
  EXPECT_EQ(differences, 0) << what;
}

std::vector<float> tanh_per_element(const std::vector<float>& x) {
  std::vector<float> y;
  for (float v : x) y.push_back(scalar_kernel_tanh(v));
  return y;
}

// A loop of a constant multiple of four elements: compilers vectorise it even
// where the kernels' loops are not (GCC's -O2 vectorises only loops that need
// no scalar remainder), so the lanes are compared with the scalar kernel in
// every build.
TEST(TanhBits, AVectorisedLoopGivesTheScalarKernelsBits) {
  constexpr size_t kCount = 4096;
  std::vector<float> x = mixed_inputs(kCount);
  std::array<float, kCount> in, out;
  std::copy(x.begin(), x.end(), in.begin());
  for (size_t i = 0; i < kCount; ++i) out[i] = fast_tanh(in[i]);
  expect_same_bits(tanh_per_element(x), out.data(), "vectorised loop");
}

// The eager kernel on tensors starting at each offset 0..4 of the inputs:
// every element in every lane position and in the loop's remainder.
TEST(TanhBits, TheEagerKernelGivesTheScalarKernelsBits) {
  std::vector<float> x = mixed_inputs(5003);
  for (size_t offset = 0; offset < 5; ++offset) {
    std::vector<float> part(x.begin() + ptrdiff_t(offset), x.end());
    Tensor y = ag::tanh(ag::constant(part, Shape{int64_t(part.size())}));
    expect_same_bits(tanh_per_element(part), y.data<float>(),
                     "eager kernel at offset " + std::to_string(offset));
  }
}

// The plan of a traced function for the given arguments.
template <class F, class... Args>
std::unique_ptr<exec::Plan> plan_of(F fn, const Args&... args) {
  auto concrete = ag::function(fn).get_concrete_function(args...);
  return std::make_unique<exec::Plan>(std::make_shared<const graph::Body>(concrete.graph().body()));
}

// Scalar steps (rank 0) and flat steps (up to 16 elements) call the scalar
// kernel; each is checked to run as such.
TEST(TanhBits, ScalarAndFlatStepsGiveTheKernelsBits) {
  // Reshaped so that tanh's result is not itself an output.
  auto reshaped = [](Tensor t) { return ag::reshape(ag::tanh(t), {-1}); };
  std::vector<float> x = mixed_inputs(16);
  Tensor vector = ag::constant(x, Shape{16});
  EXPECT_EQ(plan_of(reshaped, vector)->num_flat_steps(), 1u);
  Tensor flat = ag::function(reshaped)(vector);
  expect_same_bits(ag::tanh(vector).to_vector<float>(), flat.data<float>(), "flat step");

  EXPECT_EQ(plan_of(reshaped, ag::constant(0.5f))->num_scalar_steps(), 1u);
  auto traced = ag::function(reshaped);
  for (float v : x) {
    Tensor y = traced(ag::constant(v));
    expect_same_bits({ag::tanh(ag::constant(v)).item<float>()}, y.data<float>(), "scalar step");
  }
}

// A fused chain (tanh inside a fused step, run per block of the fused
// kernel) and a staged loop applying tanh until every element is at most
// 0.25 give eager execution's bits.
TEST(TanhBits, FusedStepsAndLoopsGiveEagerBits) {
  Tensor x = ag::constant(mixed_inputs(5003), Shape{5003});
  auto chain = [](Tensor t) { return ag::tanh(t * 0.5f) * 2.0f; };
  graph::Body body = ag::function(chain).get_concrete_function(x).graph().body();
  passes::optimize(body);
  bool fused = false;
  for (const graph::Node& n : body.nodes) fused = fused || n.kind == graph::NodeKind::Fused;
  EXPECT_TRUE(fused) << "tanh should run inside a fused step";
  Tensor graph_result = ag::function(chain)(x);
  expect_same_bits(chain(x).to_vector<float>(), graph_result.data<float>(), "fused chain");

  auto loop = [](Tensor t) {
    ag::while_stmt([&] { return ag::reduce_max(t) > 0.25f; }, [&] { t = ag::tanh(t); },
                   ag::state({"t"}, t));
    return t;
  };
  for (int64_t n : {5, 3000}) {
    Tensor start = ag::random_uniform({n}, 0.0, 1.0, ag::float32, 7);
    Tensor staged = ag::function(loop)(start);
    expect_same_bits(loop(start).to_vector<float>(), staged.data<float>(),
                     "loop over " + std::to_string(n));
  }
}

}  // namespace
}  // namespace ag
