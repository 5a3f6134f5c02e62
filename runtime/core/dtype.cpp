#include "ag/dtype.h"

#include <bit>
#include <cmath>
#include <string>

#include "ag/error.h"

namespace ag {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return "float32";
    case DType::float64:
      return "float64";
    case DType::int32:
      return "int32";
    case DType::int64:
      return "int64";
    case DType::bool_:
      return "bool";
    case DType::uint8:
      return "uint8";
    case DType::int8:
      return "int8";
    case DType::int16:
      return "int16";
    case DType::uint16:
      return "uint16";
    case DType::uint32:
      return "uint32";
    case DType::uint64:
      return "uint64";
    case DType::float16:
      return "float16";
    case DType::bfloat16:
      return "bfloat16";
    case DType::string:
      return "string";
  }
  return "?";
}

size_t dtype_size(DType dtype) {
  // A string element is a handle on its bytes (core/string_pool.h).
  if (dtype == DType::string) return sizeof(void*);
  return visit_storage_dtype(dtype, [](auto v) { return sizeof(v); });
}

namespace detail {
void throw_not_compute_dtype(DType dtype) {
  if (dtype == DType::string) {
    throw InvalidArgumentError(
        "a string tensor's elements are byte strings, not numbers; convert them with "
        "ag::strings::to_number(x, dtype), or read them with ag::strings::to_vector");
  }
  throw InternalError("a kernel was handed " + std::string(dtype_name(dtype)) +
                      ", which is computed as " + std::string(dtype_name(compute_dtype(dtype))));
}
}  // namespace detail

namespace {
// Position on the lattice bool < int32 < int64 < float32 < float64.
int rank_of(DType d) {
  switch (d) {
    case DType::bool_:
      return 0;
    case DType::int32:
      return 1;
    case DType::int64:
      return 2;
    case DType::float32:
      return 3;
    case DType::float64:
      return 4;
    default:
      return -1;
  }
}
}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::string || b == DType::string) {
    throw InvalidArgumentError(
        "cannot combine " + std::string(dtype_name(a)) + " and " + std::string(dtype_name(b)) +
        " tensors: strings mix with no other dtype; convert the numbers with "
        "ag::strings::as_string, or the strings with ag::strings::to_number");
  }
  if (!is_compute_dtype(a) || !is_compute_dtype(b)) {
    const std::string storage(dtype_name(is_compute_dtype(a) ? b : a));
    throw InvalidArgumentError(
        "cannot combine " + std::string(dtype_name(a)) + " and " + std::string(dtype_name(b)) +
        " tensors: " + storage +
        " is promoted to no other dtype; cast one operand first, e.g. ag::cast(x, ag::" +
        std::string(dtype_name(a)) + ")");
  }
  return rank_of(a) >= rank_of(b) ? a : b;
}

DType promote_with_scalar(DType tensor, ScalarKind kind) {
  if (tensor == DType::string) {
    throw InvalidArgumentError(
        "cannot combine a string tensor with a C++ number; convert the number with "
        "ag::strings::as_string, or the strings with ag::strings::to_number");
  }
  switch (kind) {
    case ScalarKind::boolean:
      return tensor;
    case ScalarKind::integer:
      return tensor == DType::bool_ ? DType::int32 : tensor;
    case ScalarKind::floating:
      return is_floating(tensor) ? tensor : DType::float32;
  }
  return tensor;
}

namespace {

// A binary float of `MantBits` stored mantissa bits and exponent bias `Bias`
// (float16: 10, 15; bfloat16: 7, 127) in 16 bits, from a double, rounding
// to nearest even.
template <int MantBits, int Bias>
uint16_t round_to_small_float(double v) {
  constexpr int kExpMax = 2 * Bias + 1;  // all ones: inf and NaN
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (std::isnan(v)) return sign | uint16_t(kExpMax << MantBits) | uint16_t(1 << (MantBits - 1));
  const double a = std::fabs(v);
  if (std::isinf(a)) return sign | uint16_t(kExpMax << MantBits);
  // Below the smallest normal the step is 2^(1 - Bias - MantBits): round the
  // count of steps (nearbyint rounds half to even). A count of 2^MantBits is
  // the smallest normal, whose bits are the same number.
  if (a < std::ldexp(1.0, 1 - Bias)) {
    return sign | uint16_t(std::nearbyint(std::ldexp(a, Bias - 1 + MantBits)));
  }
  int e = 0;
  const double f = std::frexp(a, &e);                      // a = f * 2^e, f in [0.5, 1)
  double m = std::nearbyint(std::ldexp(f, MantBits + 1));  // in [2^MantBits, 2^(MantBits+1)]
  int biased = e - 1 + Bias;
  if (m == std::ldexp(1.0, MantBits + 1)) {
    m = std::ldexp(1.0, MantBits);
    ++biased;
  }
  if (biased >= kExpMax) return sign | uint16_t(kExpMax << MantBits);
  return sign | uint16_t(biased << MantBits) | uint16_t(uint32_t(m) - (1u << MantBits));
}

}  // namespace

uint16_t float16_t::from_double(double v) {
  return round_to_small_float<10, 15>(v);
}

float float16_t::to_float(uint16_t bits) {
  const float sign = (bits & 0x8000) ? -1.0f : 1.0f;
  const int exp = (bits >> 10) & 0x1f;
  const int mant = bits & 0x3ff;
  if (exp == 0x1f) return mant ? std::copysign(NAN, sign) : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(float(mant), -24);
  return sign * std::ldexp(float(mant + 1024), exp - 25);
}

uint16_t bfloat16_t::from_double(double v) {
  return round_to_small_float<7, 127>(v);
}

float bfloat16_t::to_float(uint16_t bits) {
  return std::bit_cast<float>(uint32_t(bits) << 16);
}

}  // namespace ag
