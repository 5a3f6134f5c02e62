#include "ops/isa.h"

#include <array>
#include <atomic>
#include <string>

#include "ag/error.h"

namespace ag::ops {

namespace {

// The features each instruction set's target pragma (ops/isa.h) enables;
// __builtin_cpu_supports also checks that the OS saves the wide registers.
bool cpu_has_avx2() {
#if defined(__x86_64__) && !defined(AG_SINGLE_ISA)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
         __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("f16c") &&
         __builtin_cpu_supports("movbe") && __builtin_cpu_supports("lzcnt");
#else
  return false;
#endif
}

bool cpu_has_avx512() {
#if defined(__x86_64__) && !defined(AG_SINGLE_ISA)
  return cpu_has_avx2() && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

struct Supported {
  std::array<Isa, 3> isas{};
  size_t count = 0;
};

const Supported& supported() {
  static const Supported s = [] {
    Supported r;
    r.isas[r.count++] = Isa::kBaseline;
    if (cpu_has_avx2()) r.isas[r.count++] = Isa::kAvx2;
    if (cpu_has_avx512()) r.isas[r.count++] = Isa::kAvx512;
    return r;
  }();
  return s;
}

std::atomic<Isa>& chosen() {
  static std::atomic<Isa> isa{supported().isas[supported().count - 1]};
  return isa;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kBaseline:
      break;
  }
  return "baseline";
}

std::span<const Isa> supported_isas() {
  return {supported().isas.data(), supported().count};
}

Isa kernel_isa() {
  return chosen().load(std::memory_order_relaxed);
}

void set_kernel_isa(Isa isa) {
  for (Isa s : supported_isas()) {
    if (s == isa) {
      chosen().store(isa, std::memory_order_relaxed);
      return;
    }
  }
  throw InvalidArgumentError(std::string("set_kernel_isa: this CPU or build has no ") +
                             isa_name(isa) + " kernels");
}

}  // namespace ag::ops
