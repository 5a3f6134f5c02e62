#include "ops/check_numerics.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "ag/debugging.h"
#include "ag/error.h"

namespace ag {
namespace ops {

std::atomic<bool> g_check_numerics{false};

namespace {

struct Counts {
  int64_t nan = 0, inf = 0;
};

template <class T>
Counts count_non_finite(const T* data, int64_t n) {
  Counts c;
  for (int64_t i = 0; i < n; ++i) {
    c.nan += std::isnan(data[i]);
    c.inf += std::isinf(data[i]);
  }
  return c;
}

std::string what_was_produced(const Counts& c) {
  if (c.nan && c.inf)
    return "NaN in " + std::to_string(c.nan) + " and Inf in " + std::to_string(c.inf);
  return c.nan ? "NaN in " + std::to_string(c.nan) : "Inf in " + std::to_string(c.inf);
}

}  // namespace

void check_output_numerics(OpId op, const Tensor& output, CallSite site) {
  if (!output.defined() || output.is_symbolic()) return;
  Counts counts;
  const int64_t n = output.num_elements();
  if (output.dtype() == DType::float32) {
    counts = count_non_finite(output.data<float>(), n);
  } else if (output.dtype() == DType::float64) {
    counts = count_non_finite(output.data<double>(), n);
  }
  if (counts.nan == 0 && counts.inf == 0) return;
  std::string message = "check_numerics: op '" + std::string(op_def(op).name) + "' produced " +
                        what_was_produced(counts) + " of " + std::to_string(n) +
                        " elements of its output (" + std::string(dtype_name(output.dtype())) +
                        ", shape " + output.shape().to_string() + ")";
  if (site.line() != 0)
    message += ", defined at " + std::string(site.file_name()) + ":" + std::to_string(site.line());
  throw InvalidArgumentError(message);
}

}  // namespace ops

namespace debugging {

void enable_check_numerics() {
  ops::g_check_numerics.store(true, std::memory_order_relaxed);
}

void disable_check_numerics() {
  ops::g_check_numerics.store(false, std::memory_order_relaxed);
}

bool check_numerics_enabled() {
  return ops::check_numerics_on();
}

}  // namespace debugging
}  // namespace ag
