// A Fused node's composed loops, which plan_fused.cpp's Composer picks when
// the plan is built, and the float sums of its blocks: compiled once per
// instruction set (ops/isa.h), each set's entry points in a FusedLoops
// table.
#pragma once

#include <cstddef>
#include <cstdint>

#include "exec/plan_internal.h"
#include "ops/isa.h"

namespace ag::exec {

// The most operands a composed loop reads (a guarded step's x, g, s, r, t, e).
constexpr size_t kMaxComposedOperands = 6;

// Where the second member of an arithmetic pair reads the first's value v:
// G(v, v), G(v, e) or G(e, v), e another value.
enum class SecondForm { kBoth, kLeft, kRight };

// The flags of a guarded_division_step (FusedProgram::Stage::flags).
// where(guard, x, step): the step where the guard is false.
constexpr uint32_t kStepWhereGuardFails = 1;
constexpr uint32_t kQuotientWhereUnequal = 2;  // the quotient where x mod s != r
// floordiv before mod: a zero divisor raises its error.
constexpr uint32_t kQuotientFirst = 4;
constexpr uint32_t kProductMinusAddend = 8;   // x * t - e instead of x * t + e
constexpr uint32_t kAddendMinusProduct = 16;  // e - x * t

// Each picker returns the composed loop for its dtype and ops, or null
// when it has none (fused_loops.cpp says what each loop computes).
struct FusedLoops {
  FusedProgram::ComposedFn (*arithmetic_pair_for)(DType dtype, ops::OpId first, ops::OpId second,
                                                  SecondForm form, bool sum);
  FusedProgram::ComposedFn (*scaled_pair_for)(DType dtype, ops::OpId second, SecondForm form);
  FusedProgram::ComposedFn (*compare_select_for)(DType dtype, ops::OpId comparison, ops::OpId fold);
  FusedProgram::ComposedFn (*divmod_compare_select_for)(DType dtype, ops::OpId comparison,
                                                        bool quotient_then, bool quotient_first,
                                                        ops::OpId fold);
  FusedProgram::ComposedFn (*guarded_division_step_for)(DType dtype, ops::OpId guard,
                                                        ops::OpId fold);
  FusedProgram::ComposedFn (*mod_compare_select_for)(DType dtype, ops::OpId comparison,
                                                     bool mod_left, ops::OpId fold);
  // A block's sum, in more lanes than the reduction kernel's.
  float (*sum_float_block)(const float* x, int64_t n);
  double (*sum_double_block)(const double* x, int64_t n);
};

#define AG_DECLARE_FUSED_LOOPS(isa)    \
  namespace isa {                      \
  extern const FusedLoops fused_loops; \
  }
AG_FOR_EACH_ISA(AG_DECLARE_FUSED_LOOPS)
#undef AG_DECLARE_FUSED_LOOPS

// The loops of ops::kernel_isa()'s instruction set.
inline const FusedLoops& isa_fused_loops() {
  return AG_ISA_SELECT(fused_loops);
}

}  // namespace ag::exec
