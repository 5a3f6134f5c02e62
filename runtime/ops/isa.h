// The instruction sets the elementwise, reduction and fused loops are
// compiled for, and the one they run. A portable build (no -march=native)
// compiles those files once per instruction set (runtime/CMakeLists.txt:
// AG_MULTIVERSIONED_SOURCES), each into its own namespace (AG_ISA_NS):
// baseline (the build's flags: SSE2 on x86-64), avx2 (x86-64-v3: AVX2, FMA,
// BMI2) and avx512 (x86-64-v4: AVX-512 F, BW, DQ, VL). Each exports a table
// of its entry points (ops/kernel_tables.h); the runtime calls the table of
// the best instruction set the CPU has, read once.
//
// The instruction set is switched on with a target pragma after a file's
// #includes (AG_ISA_BEGIN ... AG_ISA_END), not with compiler flags: the
// inline functions and templates of the headers (the standard library's,
// the functors of ops/scalar_ops.h) stay baseline code wherever the linker
// keeps a copy, and are inlined into the loops that call them, which the
// compiler then vectorises for the loop's instruction set. Nothing outside
// an AG_ISA_NS namespace holds an AVX instruction
// (tests/runtime/kernel_isa_objects_test.sh checks the library).
//
// Every instruction set gives the same bits: no expression is contracted to
// a fused multiply-add (-ffp-contract=off), and the reductions fix their
// order of additions in lanes of their own, not the vector width's.
#pragma once

#include <cstdint>
#include <span>

namespace ag::ops {

enum class Isa : uint8_t { kBaseline, kAvx2, kAvx512 };

const char* isa_name(Isa isa);

// The instruction sets compiled in and supported by this CPU, baseline
// first.
std::span<const Isa> supported_isas();

// The instruction set the kernels run: the last of supported_isas() unless
// set_kernel_isa chose another.
Isa kernel_isa();

// Runs the kernels with `isa` from now on (tests compare the instruction
// sets' results in one process); throws InvalidArgumentError if the CPU
// lacks it. Plans already built keep the flat kernels they picked.
void set_kernel_isa(Isa isa);

}  // namespace ag::ops

// AG_FOR_EACH_ISA(M) expands M(ns) for each instruction set's namespace
// this build compiles.
#if defined(__x86_64__) && !defined(AG_SINGLE_ISA)
#define AG_FOR_EACH_ISA(M) M(baseline) M(avx2) M(avx512)
#else
#define AG_FOR_EACH_ISA(M) M(baseline)
#endif

// The table `table` of kernel_isa()'s namespace (ops/kernel_tables.h).
#if defined(__x86_64__) && !defined(AG_SINGLE_ISA)
#define AG_ISA_SELECT(table) \
  (*::ag::ops::select_for_isa(&baseline::table, &avx2::table, &avx512::table))
#else
#define AG_ISA_SELECT(table) (baseline::table)
#endif

namespace ag::ops {
template <class Table>
const Table* select_for_isa(const Table* baseline, const Table* avx2, const Table* avx512) {
  switch (kernel_isa()) {
    case Isa::kAvx512:
      return avx512;
    case Isa::kAvx2:
      return avx2;
    case Isa::kBaseline:
      break;
  }
  return baseline;
}
}  // namespace ag::ops

// In a multiversioned file: AG_ISA_BEGIN after the #includes, AG_ISA_END at
// the end; code between them is compiled for AG_ISA_NS's instruction set.
#define AG_ISA_TARGET_avx2 "avx2,fma,bmi,bmi2,lzcnt,popcnt,f16c,movbe"
#define AG_ISA_TARGET_avx512 \
  "avx2,fma,bmi,bmi2,lzcnt,popcnt,f16c,movbe,avx512f,avx512cd,avx512bw,avx512dq,avx512vl"
#define AG_ISA_IS_BASELINE_baseline 1
#define AG_ISA_CONCAT_(a, b) a##b
#define AG_ISA_CONCAT(a, b) AG_ISA_CONCAT_(a, b)
#define AG_ISA_STRINGIFY(x) #x
#define AG_ISA_PRAGMA(x) _Pragma(AG_ISA_STRINGIFY(x))
#if !defined(AG_ISA_NS) || !defined(__x86_64__) || AG_ISA_CONCAT(AG_ISA_IS_BASELINE_, AG_ISA_NS)
#define AG_ISA_BEGIN
#define AG_ISA_END
#elif defined(__clang__)
#define AG_ISA_BEGIN                  \
  AG_ISA_PRAGMA(clang attribute push( \
      __attribute__((target(AG_ISA_CONCAT(AG_ISA_TARGET_, AG_ISA_NS)))), apply_to = function))
#define AG_ISA_END AG_ISA_PRAGMA(clang attribute pop)
#else
#define AG_ISA_BEGIN              \
  AG_ISA_PRAGMA(GCC push_options) \
  AG_ISA_PRAGMA(GCC target(AG_ISA_CONCAT(AG_ISA_TARGET_, AG_ISA_NS)))
#define AG_ISA_END AG_ISA_PRAGMA(GCC pop_options)
#endif
