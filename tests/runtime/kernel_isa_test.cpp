// Every instruction set's kernels give the baseline kernels' bits
// (ops/isa.h): each elementwise op of ag/ops.def on every dtype it takes, the
// reductions and the scan over each axis, and traced functions whose fused
// loops compose their members (MSE's sum, collatz's integer step), run
// under each instruction set this CPU has and compared with the baseline
// run. The inputs are long enough for the vector loops and their tails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "ops/dispatch.h"
#include "ops/isa.h"
#include "ops/op_registry.h"
#include "staged_test_util.h"

namespace {

using ag::DType;
using ag::Tensor;
using ag::ops::Isa;
using Tensors = std::vector<Tensor>;

// Restores the kernels' instruction set when a test ends.
class IsaRestorer {
 public:
  IsaRestorer() : saved_(ag::ops::kernel_isa()) {}
  ~IsaRestorer() { ag::ops::set_kernel_isa(saved_); }
  IsaRestorer(const IsaRestorer&) = delete;
  IsaRestorer& operator=(const IsaRestorer&) = delete;

 private:
  Isa saved_;
};

// Random values of `dtype` in [-4, 4] (integers: [-40, 40]); with
// `operand`, integers in [1, 6] instead (divisors, exponents, shift counts).
Tensor random_tensor(DType dtype, const ag::Shape& shape, unsigned seed, bool operand = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> real(-4.0, 4.0);
  std::uniform_int_distribution<int> integer(operand ? 1 : -40, operand ? 6 : 40);
  std::vector<double> values(size_t(shape.num_elements()));
  for (double& v : values) {
    v = ag::is_floating(dtype) ? real(rng) : double(integer(rng));
  }
  if (dtype == ag::bool_) {
    for (double& v : values) v = v > 0;
  }
  return ag::cast(ag::constant(values, shape), dtype);
}

// fn's results under the baseline kernels and under each other instruction
// set of this CPU have the same bits.
void expect_same_bits_on_every_isa(const std::function<Tensor()>& fn, const std::string& what) {
  IsaRestorer restore;
  ag::ops::set_kernel_isa(Isa::kBaseline);
  const Tensor baseline = fn();
  for (Isa isa : ag::ops::supported_isas()) {
    if (isa == Isa::kBaseline) continue;
    ag::ops::set_kernel_isa(isa);
    ag_test::expect_same_bits(baseline, fn(), what + " with " + ag::ops::isa_name(isa));
  }
}

struct ElementwiseOp {
  ag::ops::OpId id;
  const char* name;
  int arity;
};

std::vector<ElementwiseOp> elementwise_ops() {
  std::vector<ElementwiseOp> ops;
#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx)
#define AG_ELEMENTWISE_OP(id, name, arity, infer, kernel, functor, gradient, onnx, api) \
  ops.push_back({ag::ops::OpId::id, name, arity});
#include "ag/ops.def"
#undef AG_ELEMENTWISE_OP
#undef AG_OP
  return ops;
}

bool takes(const ElementwiseOp& op, DType dtype) {
  const std::vector<ag::ops::ValueType> types(size_t(op.arity), ag::ops::ValueType{dtype, {4}});
  const ag::ops::Attrs attrs;
  try {
    ag::ops::op_def(op.id).infer({op.name, types, attrs, {}});
    return true;
  } catch (const ag::InvalidArgumentError&) {
    return false;
  }
}

TEST(KernelIsa, BaselineIsAlwaysSupportedAndListedFirst) {
  ASSERT_FALSE(ag::ops::supported_isas().empty());
  EXPECT_EQ(ag::ops::supported_isas().front(), Isa::kBaseline);
  EXPECT_EQ(ag::ops::kernel_isa(), ag::ops::supported_isas().back());
}

TEST(KernelIsa, ChoosingAnInstructionSetTheCpuLacksIsAnError) {
  IsaRestorer restore;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const auto& s = ag::ops::supported_isas();
    if (std::find(s.begin(), s.end(), isa) != s.end()) continue;
    try {
      ag::ops::set_kernel_isa(isa);
      FAIL() << "set_kernel_isa accepted " << ag::ops::isa_name(isa);
    } catch (const ag::InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(ag::ops::isa_name(isa)), std::string::npos) << e.what();
    }
  }
}

TEST(KernelIsa, ElementwiseOpsGiveTheBaselineBits) {
  int runs = 0;
  for (const ElementwiseOp& op : elementwise_ops()) {
    for (DType dtype : {ag::float32, ag::float64, ag::int32, ag::int64, ag::bool_}) {
      if (!takes(op, dtype)) continue;
      ++runs;
      // Same shapes, a row broadcast and a scalar operand: each loop form.
      for (const auto& [shape, other] : std::vector<std::pair<ag::Shape, ag::Shape>>{
               {{1031}, {1031}}, {{37, 29}, {29}}, {{1031}, {}}}) {
        Tensors inputs;
        for (int i = 0; i < op.arity; ++i) {
          inputs.push_back(random_tensor(dtype, i == 0 ? shape : other, unsigned(7 * i + 1),
                                         /*operand=*/i > 0));
        }
        expect_same_bits_on_every_isa(
            [&] { return ag::ops::apply(op.id, inputs); },
            std::string(op.name) + " on " + std::string(ag::dtype_name(dtype)));
      }
    }
  }
  EXPECT_GT(runs, int(elementwise_ops().size()));
}

TEST(KernelIsa, ReductionsAndScansGiveTheBaselineBits) {
  using ag::ops::OpId;
  for (DType dtype : {ag::float32, ag::float64, ag::int32, ag::int64}) {
    const Tensor x = random_tensor(dtype, {67, 45}, 11);
    for (OpId id :
         {OpId::ReduceSum, OpId::ReduceProd, OpId::ReduceMax, OpId::ReduceMin, OpId::ReduceMean}) {
      for (const std::vector<int64_t>& axes :
           std::vector<std::vector<int64_t>>{{}, {0}, {1}, {0, 1}}) {
        ag::ops::Attrs attrs;
        attrs.ints = axes;
        expect_same_bits_on_every_isa(
            [&] { return ag::ops::apply(id, {x}, attrs); },
            std::string(ag::ops::op_def(id).name) + " on " + std::string(ag::dtype_name(dtype)));
      }
    }
    for (int axis : {0, 1}) {
      expect_same_bits_on_every_isa([&] { return ag::cumsum(x, axis); }, "cumsum");
      expect_same_bits_on_every_isa([&] { return ag::argmax(x, axis); }, "argmax");
    }
  }
}

TEST(KernelIsa, FusedLoopsGiveTheBaselineBits) {
  const Tensor a = random_tensor(ag::float32, {100003}, 3);
  const Tensor b = random_tensor(ag::float32, {100003}, 4);
  expect_same_bits_on_every_isa(
      [&] {
        auto mse = ag::function([](const Tensor& p, const Tensor& q) {
          const Tensor d = p - q;
          return ag::reduce_mean(d * d);
        });
        return mse(a, b);
      },
      "a traced mean squared error");
  const Tensor n = ag::abs(random_tensor(ag::int32, {4099}, 5)) + 1;
  expect_same_bits_on_every_isa(
      [&] {
        auto step = ag::function([](const Tensor& x) {
          return ag::where(x > 1, ag::where(x % 2 == 0, ag::floordiv(x, 2), 3 * x + 1), x);
        });
        return step(n);
      },
      "a traced collatz step");
}

}  // namespace
