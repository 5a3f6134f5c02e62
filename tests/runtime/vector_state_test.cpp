// The AVX kernels leave the upper halves of the vector registers unused
// (ops/kernel_tables.h, clear_upper_vector_state): with them in use, every
// SSE instruction that runs next (libm's scalar exp and log, the baseline
// loops) pays a state transition, which made the float32 log_softmax
// gradient 5x slower after a `where`. Every op case runs eagerly and traced
// under each instruction set this CPU has, and the processor's record of the
// state in use (XGETBV with ECX = 1) is read after each.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "op_cases.h"
#include "ops/isa.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace {

using ag::Tensor;
using ag::ops::Isa;

// Whether XGETBV reads the state in use (CPUID leaf 0xD, sub-leaf 1, EAX bit 2).
bool state_in_use_readable() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(0xD, 1, &eax, &ebx, &ecx, &edx)) return false;
  return (eax & (1u << 2)) != 0;
#else
  return false;
#endif
}

// The upper halves of ymm0-15 (bit 2) or of zmm0-15 (bit 6) are in use.
bool upper_vector_state_in_use() {
#if defined(__x86_64__)
  uint32_t low = 0, high = 0;
  asm volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(1));
  return (low & ((1u << 2) | (1u << 6))) != 0;
#else
  return false;
#endif
}

class IsaRestorer {
 public:
  IsaRestorer() : saved_(ag::ops::kernel_isa()) {}
  ~IsaRestorer() { ag::ops::set_kernel_isa(saved_); }
  IsaRestorer(const IsaRestorer&) = delete;
  IsaRestorer& operator=(const IsaRestorer&) = delete;

 private:
  Isa saved_;
};

// The op cases whose eager or traced run leaves the state in use.
std::vector<std::string> cases_leaving_upper_state() {
  std::vector<std::string> leaving;
  for (const ag_test::OpCase& c : ag_test::all_op_cases()) {
    for (ag::DType dtype : c.dtypes) {
      const std::vector<Tensor> inputs = c.inputs(dtype);
      const std::string name = c.name + " " + std::string(ag::dtype_name(dtype));
      c.op(inputs);
      if (upper_vector_state_in_use()) leaving.push_back(name + " eagerly");
      auto traced = ag::function([&](const std::vector<Tensor>& args) { return c.op(args); });
      traced(inputs);  // traces and runs
      traced(inputs);  // runs the plan
      if (upper_vector_state_in_use()) leaving.push_back(name + " traced");
    }
  }
  return leaving;
}

TEST(VectorState, KernelsLeaveTheUpperVectorStateUnused) {
  if (!state_in_use_readable()) GTEST_SKIP() << "this CPU does not report the state in use";
  IsaRestorer restore;
  for (Isa isa : ag::ops::supported_isas()) {
    ag::ops::set_kernel_isa(isa);
    const std::vector<std::string> leaving = cases_leaving_upper_state();
    std::string list;
    for (const std::string& name : leaving) list += "\n  " + name;
    EXPECT_TRUE(leaving.empty()) << leaving.size() << " op cases leave the upper halves of the "
                                 << "vector registers in use with " << ag::ops::isa_name(isa) << ":"
                                 << list;
  }
}

// The case that was found: where with a scalar operand (its broadcast path).
TEST(VectorState, BroadcastWhereLeavesTheUpperVectorStateUnused) {
  if (!state_in_use_readable()) GTEST_SKIP() << "this CPU does not report the state in use";
  IsaRestorer restore;
  const Tensor condition = ag::random_uniform({512, 512}, 0.0, 1.0, ag::float32, 1) > 0.5;
  const Tensor x = ag::random_uniform({512, 512}, -1.0, 1.0, ag::float32, 2);
  for (Isa isa : ag::ops::supported_isas()) {
    ag::ops::set_kernel_isa(isa);
    const Tensor y = ag::where(condition, x, ag::constant(0.0f));
    EXPECT_FALSE(upper_vector_state_in_use()) << ag::ops::isa_name(isa);
    EXPECT_EQ(y.shape(), x.shape());
  }
}

}  // namespace
