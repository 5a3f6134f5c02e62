// The flat kernels (ops::flat_kernel, runtime/ops/kernels_elementwise.cpp),
// which flat steps and flat fused programs call on small static vectors:
// for every elementwise op, cast and where, on every dtype they take, each
// element is what the op's scalar kernel gives for it, bit for bit, with
// contiguous and broadcast inputs, in place too; an error is the scalar
// kernel's.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "ops/op_registry.h"

namespace ag {
namespace {

using ops::OpId;

constexpr int32_t kMaxElements = 16;  // the executor's kMaxFlatElements
constexpr DType kDTypes[] = {DType::float32, DType::float64, DType::int32, DType::int64,
                             DType::bool_};

// kMaxElements random values of `dtype` (small integers, so that division
// by zero and the power op's negative exponents come up; floats of either
// sign, zero included).
std::vector<unsigned char> random_values(DType dtype, std::mt19937& rng) {
  std::vector<unsigned char> bytes(kMaxElements * dtype_size(dtype));
  visit_dtype(dtype, [&](auto v) {
    using T = decltype(v);
    T* values = reinterpret_cast<T*>(bytes.data());
    for (int32_t e = 0; e < kMaxElements; ++e) {
      if constexpr (std::is_same_v<T, bool>) {
        values[e] = rng() % 2 == 0;
      } else if constexpr (std::is_integral_v<T>) {
        values[e] = T(int(rng() % 9) - 4);
      } else {
        values[e] = T(std::uniform_real_distribution<double>(-3, 3)(rng));
        if (e == 3) values[e] = T(0);
      }
    }
  });
  return bytes;
}

// The scalar kernel's result for each element, as bytes; empty if it threw,
// with the message in `error`.
std::vector<unsigned char> per_element(ops::ScalarKernelFn scalar, const void* const* inputs,
                                       const uint32_t* strides, int32_t n, size_t out_size,
                                       std::string& error) {
  std::vector<unsigned char> out(size_t(n) * out_size);
  try {
    for (int32_t e = 0; e < n; ++e) {
      const void* at[3];
      for (size_t i = 0; i < 3; ++i)
        at[i] = static_cast<const char*>(inputs[i]) + size_t(e) * strides[i];
      scalar(at, out.data() + size_t(e) * out_size);
    }
  } catch (const Error& e) {
    error = e.what();
    return {};
  }
  return out;
}

struct Case {
  OpId op;
  int arity;
  DType input;   // of input 0 (where: of its values)
  DType output;  // cast's target; otherwise unused by the look-up
};

// Every op with element kernels, on every dtype it takes.
std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (size_t id = 0; id < size_t(OpId::kCount); ++id) {
    const ops::OpDef& def = ops::op_def(OpId(id));
    for (DType in : kDTypes) {
      for (DType out : kDTypes) {
        const bool cast = def.id == OpId::Cast;
        if (!cast && out != in) continue;
        if (!ops::scalar_kernel(def.id, in, out)) continue;
        cases.push_back({def.id, cast ? 1 : def.arity, in, out});
      }
    }
  }
  return cases;
}

std::string describe(const Case& c) {
  return std::string(ops::op_def(c.op).name) + " on " + std::string(dtype_name(c.input)) + " (to " +
         std::string(dtype_name(c.output)) + ")";
}

// The op's output dtype on rank-0 inputs, by its shape rule; its input's for
// kernels the rule does not admit (maximum and minimum of bools: the
// executor's folds of reduce_any and reduce_all).
DType output_dtype(const Case& c) {
  std::vector<ops::ValueType> types;
  for (int i = 0; i < c.arity; ++i)
    types.push_back({c.op == OpId::Where && i == 0 ? DType::bool_ : c.input, Shape{}});
  std::vector<const void*> values(types.size(), nullptr);
  ops::Attrs attrs;
  attrs.dtype = c.output;
  try {
    return ops::op_def(c.op).infer({ops::op_def(c.op).name, types, attrs, values}).dtype;
  } catch (const InvalidArgumentError&) {
    return c.input;
  }
}

TEST(FlatKernels, EveryOpHasOneWhereItHasAScalarKernel) {
  size_t count = 0;
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(describe(c));
    EXPECT_NE(ops::flat_kernel(c.op, c.input, c.output), nullptr);
    ++count;
  }
  // Add, Where and Cast at least, over several dtypes each.
  EXPECT_GT(count, 60u);
  EXPECT_EQ(ops::flat_kernel(OpId::MatMul, DType::float32, DType::float32), nullptr);
}

TEST(FlatKernels, EachElementIsTheScalarKernelsBitForBit) {
  std::mt19937 rng(17);
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(describe(c));
    const ops::ScalarKernelFn scalar = ops::scalar_kernel(c.op, c.input, c.output);
    const ops::FlatKernelFn flat = ops::flat_kernel(c.op, c.input, c.output);
    ASSERT_NE(flat, nullptr);
    // where's condition is bool; its values (and every other op's inputs)
    // are of the input dtype.
    std::vector<std::vector<unsigned char>> inputs;
    for (int i = 0; i < c.arity; ++i) {
      const DType dtype = c.op == OpId::Where && i == 0 ? DType::bool_ : c.input;
      inputs.push_back(random_values(dtype, rng));
    }
    const void* in[3];
    uint32_t sizes[3];
    for (size_t i = 0; i < 3; ++i) {
      const size_t k = i < inputs.size() ? i : 0;  // padded with the first, as the executor does
      in[i] = inputs[k].data();
      sizes[i] = uint32_t(inputs[k].size() / kMaxElements);
    }
    const size_t out_size = dtype_size(output_dtype(c));
    for (int32_t n : {1, 2, 5, 8, kMaxElements}) {
      // Every input contiguous; then each in turn broadcast (stride 0).
      for (int broadcast = -1; broadcast < c.arity; ++broadcast) {
        uint32_t strides[3];
        for (size_t i = 0; i < 3; ++i) strides[i] = int(i) == broadcast ? 0 : sizes[i];
        std::string scalar_error;
        std::vector<unsigned char> expected =
            per_element(scalar, in, strides, n, out_size, scalar_error);
        std::vector<unsigned char> actual(size_t(n) * out_size);
        std::string flat_error;
        try {
          flat(in, strides, n, actual.data());
        } catch (const Error& e) {
          flat_error = e.what();
        }
        ASSERT_EQ(flat_error, scalar_error) << "n = " << n << ", broadcast " << broadcast;
        if (!scalar_error.empty()) continue;
        ASSERT_EQ(std::memcmp(actual.data(), expected.data(), actual.size()), 0)
            << "n = " << n << ", broadcast " << broadcast;
      }
    }
  }
}

// The binary form (the executor's Scalar2) of every two-input op: the
// scalar kernel's bits and errors, element by element; none for other ops.
TEST(FlatKernels, BinaryScalarKernelsAreTheScalarKernelsBitForBit) {
  std::mt19937 rng(23);
  size_t count = 0;
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(describe(c));
    const ops::BinaryScalarKernelFn binary = ops::binary_scalar_kernel(c.op, c.input, c.output);
    if (c.arity != 2) {
      EXPECT_EQ(binary, nullptr);
      continue;
    }
    ASSERT_NE(binary, nullptr);
    ++count;
    const ops::ScalarKernelFn scalar = ops::scalar_kernel(c.op, c.input, c.output);
    const std::vector<unsigned char> a = random_values(c.input, rng);
    const std::vector<unsigned char> b = random_values(c.input, rng);
    const size_t in_size = a.size() / kMaxElements, out_size = dtype_size(output_dtype(c));
    for (int32_t e = 0; e < kMaxElements; ++e) {
      const void* in[2] = {a.data() + size_t(e) * in_size, b.data() + size_t(e) * in_size};
      unsigned char expected[16] = {}, actual[16] = {};
      std::string scalar_error, binary_error;
      try {
        scalar(in, expected);
      } catch (const Error& err) {
        scalar_error = err.what();
      }
      try {
        binary(in[0], in[1], actual);
      } catch (const Error& err) {
        binary_error = err.what();
      }
      ASSERT_EQ(binary_error, scalar_error) << "element " << e;
      ASSERT_EQ(std::memcmp(actual, expected, out_size), 0) << "element " << e;
    }
  }
  EXPECT_GT(count, 40u);  // add, mod, less, ... over several dtypes each
}

// int32 mod and floordiv by a constant without a division: the ops' bits
// for every sign and magnitude of divisor, at the extremes and on random
// values; no such kernel for a zero divisor (whose error the binary kernel
// raises), a floordiv by 1 or -1, int64 or another op.
TEST(FlatKernels, ModAndFloorDivByAConstantAreTheirKernelsBitForBit) {
  std::mt19937 rng(29);
  std::vector<int32_t> divisors = {
      1,  -1,      2,          -2, 3,          -3,        5,         15,           -7,
      10, 1 << 30, -(1 << 30), 64, 1000000007, INT32_MAX, INT32_MIN, INT32_MIN + 1};
  for (int k = 0; k < 40; ++k) divisors.push_back(int32_t(rng()) >> (k % 31));
  std::vector<int32_t> values = {
      0, 1, -1, 2, -2, 14, 15, -15, 16, INT32_MAX, INT32_MIN, INT32_MIN + 1, INT32_MAX - 1};
  for (int k = 0; k < 2000; ++k) values.push_back(int32_t(rng()) >> (k % 32));
  for (int32_t d : divisors) {
    for (int32_t a : {d, int32_t(0u - uint32_t(d))}) values.push_back(a);  // -d, wrapping
  }
  for (OpId op : {OpId::Mod, OpId::FloorDiv}) {
    const ops::BinaryScalarKernelFn kernel =
        ops::binary_scalar_kernel(op, DType::int32, DType::int32);
    for (int32_t d : divisors) {
      if (d == 0 || (op == OpId::FloorDiv && (d == 1 || d == -1))) continue;
      SCOPED_TRACE(std::string(ops::op_def(op).name) + " by " + std::to_string(d));
      ops::PreparedConstant prepared;
      const ops::BinaryScalarKernelFn by_constant =
          ops::binary_kernel_by_constant(op, DType::int32, &d, prepared);
      ASSERT_NE(by_constant, nullptr);
      for (int32_t a : values) {
        int32_t expected = 0, actual = 0;
        kernel(&a, &d, &expected);
        by_constant(&a, prepared.bytes, &actual);
        ASSERT_EQ(actual, expected) << a;
      }
    }
  }
  ops::PreparedConstant prepared;
  const int32_t zero = 0, one = 1, minus_one = -1;
  const int64_t seven = 7;
  EXPECT_EQ(ops::binary_kernel_by_constant(OpId::Mod, DType::int32, &zero, prepared), nullptr);
  EXPECT_EQ(ops::binary_kernel_by_constant(OpId::FloorDiv, DType::int32, &zero, prepared), nullptr);
  EXPECT_EQ(ops::binary_kernel_by_constant(OpId::FloorDiv, DType::int32, &one, prepared), nullptr);
  EXPECT_EQ(ops::binary_kernel_by_constant(OpId::FloorDiv, DType::int32, &minus_one, prepared),
            nullptr);
  EXPECT_EQ(ops::binary_kernel_by_constant(OpId::Mod, DType::int64, &seven, prepared), nullptr);
  EXPECT_EQ(ops::binary_kernel_by_constant(OpId::Add, DType::int32, &divisors[4], prepared),
            nullptr);
}

// A flat step may write over an input of the output's layout (x = x + y in a
// loop body): each element's inputs are read before it is written.
TEST(FlatKernels, OutputMayBeAnInput) {
  const ops::FlatKernelFn add = ops::flat_kernel(OpId::Add, DType::int32, DType::int32);
  std::vector<int32_t> x(kMaxElements), y(kMaxElements);
  for (int32_t e = 0; e < kMaxElements; ++e) {
    x[size_t(e)] = e;
    y[size_t(e)] = 100 * e;
  }
  const void* in[3] = {x.data(), y.data(), x.data()};
  const uint32_t strides[3] = {4, 4, 4};
  add(in, strides, kMaxElements, x.data());
  for (int32_t e = 0; e < kMaxElements; ++e) EXPECT_EQ(x[size_t(e)], 101 * e);
}

}  // namespace
}  // namespace ag
