// Element types and the type promotion rules.
//
// Kernels compute on five dtypes: float32, float64, int32, int64 and bool.
// The other eight are storage dtypes: kept in memory at their own width and
// computed in a wider compute dtype (`compute_dtype`), as TensorFlow's and
// PyTorch's CPU kernels do for float16, so that no kernel template is
// instantiated for them:
//
//   float16, bfloat16          -> float32, rounded to nearest even on store
//   int8, int16, uint8, uint16 -> int32, wrapped on store (uint8 255 + 1 = 0)
//   uint32                     -> int64, wrapped on store
//   uint64                     -> int64 on the same bits: +, -, *, negation,
//                                 bitwise ops and moves wrap as uint64 does;
//                                 ops that only order values (comparisons,
//                                 min/max, argmax, sorting) see the bits with
//                                 the top one flipped, exact on every value;
//                                 the other ops (division, mod, pow, abs...)
//                                 are exact below 2^63 and an error above
//
// `ops::apply` does this for every op except `cast` and the ops that read
// only shapes: it casts storage-dtype inputs to their compute dtype, runs the
// op there, and casts each output whose dtype follows its inputs' back; an
// output of fixed dtype (a comparison's bool, argmax's int64) keeps it. A
// traced graph holds the casts an eager call runs, so both give the same bits.
// Gradients do not flow into float16/bfloat16 in this version: a tape asked
// for one says so.
//
// Promotion (used by every binary op and by `where`):
//
//   1. Two tensors: the result is the larger type on the lattice
//        bool < int32 < int64 < float32 < float64
//      (as JAX does; int64 + float32 -> float32). The smaller operand is cast.
//      A storage dtype mixes with no other dtype, as in TensorFlow: the error
//      asks for an explicit `ag::cast`.
//   2. A tensor and a C++ scalar: the scalar is "weak", like a Python scalar in
//      TensorFlow. It takes the tensor's dtype when its kind fits:
//        int32 tensor * 2     -> int32
//        uint8 tensor + 1     -> uint8
//        float32 tensor + 1.5 -> float32
//        float16 tensor * 0.5 -> float16
//        bool tensor + 1      -> int32   (an integer scalar lifts bool to int32)
//        int32 tensor * 1.5   -> float32 (a floating scalar lifts ints to float32)
//      A C++ `bool` scalar is weak bool; `double`/`float` are weak float;
//      every other arithmetic type is weak int.
//   3. Ops with a fixed result type ignore the rule: comparisons and logical
//      ops give bool, `cast` gives what it is asked for, `divide` on integers
//      gives float64 (true division, as TensorFlow's `/`).
//
// `string` (tf.string) is apart from all of this: its elements are byte
// strings, not numbers (docs/strings.md). Only the string ops
// (ag/strings.h) and the ops that move elements without reading them
// (reshape, transpose, concat, gather, slice, ...) take it; every other op
// rejects it with an error naming ag::strings::to_number, and it mixes with
// no other dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ag {

// The first five are the compute dtypes; new dtypes go at the end, since the
// enumerator values are stored in graphs' text form and checkpoints.
enum class DType : uint8_t {
  float32,
  float64,
  int32,
  int64,
  bool_,
  uint8,
  int8,
  int16,
  uint16,
  uint32,
  uint64,
  float16,
  bfloat16,
  string,
};
inline constexpr int kNumDTypes = int(DType::string) + 1;

inline constexpr DType float32 = DType::float32;
inline constexpr DType float64 = DType::float64;
inline constexpr DType int32 = DType::int32;
inline constexpr DType int64 = DType::int64;
inline constexpr DType bool_ = DType::bool_;
inline constexpr DType uint8 = DType::uint8;
inline constexpr DType int8 = DType::int8;
inline constexpr DType int16 = DType::int16;
inline constexpr DType uint16 = DType::uint16;
inline constexpr DType uint32 = DType::uint32;
inline constexpr DType uint64 = DType::uint64;
inline constexpr DType float16 = DType::float16;
inline constexpr DType bfloat16 = DType::bfloat16;
inline constexpr DType string = DType::string;

// Every dtype of numbers and bool, compute dtypes first: the dtypes that
// ag::cast converts between. `string` is left out, since its elements are
// not numbers: code that takes every dtype names it apart.
inline constexpr DType kAllDTypes[] = {float32, float64, int32,  int64,  bool_,   uint8,   int8,
                                       int16,   uint16,  uint32, uint64, float16, bfloat16};

// "float32", "int32", "bool", "bfloat16", ...
std::string_view dtype_name(DType dtype);
size_t dtype_size(DType dtype);
inline bool is_floating(DType d) {
  return d == DType::float32 || d == DType::float64 || d == DType::float16 || d == DType::bfloat16;
}
inline bool is_integer(DType d) {
  return d == DType::int32 || d == DType::int64 || (d >= DType::uint8 && d <= DType::uint64);
}
inline bool is_unsigned(DType d) {
  return d == DType::uint8 || d == DType::uint16 || d == DType::uint32 || d == DType::uint64;
}
// Whether numeric kernels compute on `d` (see the top of this file).
inline bool is_compute_dtype(DType d) {
  return d <= DType::bool_;
}
// Whether `d` is a storage dtype: kept at its own width, computed in a wider
// one. Not string, which is computed as itself by the string ops.
inline bool is_storage_dtype(DType d) {
  return !is_compute_dtype(d) && d != DType::string;
}
// The dtype kernels compute a value of dtype `d` in.
inline DType compute_dtype(DType d) {
  switch (d) {
    case DType::uint8:
    case DType::int8:
    case DType::int16:
    case DType::uint16:
      return DType::int32;
    case DType::uint32:
    case DType::uint64:
      return DType::int64;
    case DType::float16:
    case DType::bfloat16:
      return DType::float32;
    default:
      return d;
  }
}

// Rule 1 above; throws InvalidArgumentError for a storage dtype mixed with
// another dtype.
DType promote_types(DType a, DType b);

// The kind of a C++ scalar in rule 2.
enum class ScalarKind : uint8_t { boolean, integer, floating };
// Rule 2: the dtype a weak scalar of `kind` combined with a `tensor` dtype gives.
DType promote_with_scalar(DType tensor, ScalarKind kind);

// The storage types of float16 and bfloat16: the bits, converted from a
// double with rounding to nearest even (overflow gives infinity, NaN stays
// NaN, subnormals are kept) and to float exactly.
struct float16_t {
  uint16_t bits = 0;
  float16_t() = default;
  explicit float16_t(double v) : bits(from_double(v)) {}
  operator float() const { return to_float(bits); }
  static float16_t from_bits(uint16_t b) {
    float16_t h;
    h.bits = b;
    return h;
  }
  static uint16_t from_double(double v);
  static float to_float(uint16_t bits);
};
struct bfloat16_t {
  uint16_t bits = 0;
  bfloat16_t() = default;
  explicit bfloat16_t(double v) : bits(from_double(v)) {}
  operator float() const { return to_float(bits); }
  static bfloat16_t from_bits(uint16_t b) {
    bfloat16_t h;
    h.bits = b;
    return h;
  }
  static uint16_t from_double(double v);
  static float to_float(uint16_t bits);
};

// C++ type <-> DType.
template <class T>
struct dtype_of;
#define AG_DTYPE_OF(T, D)                    \
  template <>                                \
  struct dtype_of<T> {                       \
    static constexpr DType value = DType::D; \
  };
AG_DTYPE_OF(float, float32)
AG_DTYPE_OF(double, float64)
AG_DTYPE_OF(int32_t, int32)
AG_DTYPE_OF(int64_t, int64)
AG_DTYPE_OF(bool, bool_)
AG_DTYPE_OF(uint8_t, uint8)
AG_DTYPE_OF(int8_t, int8)
AG_DTYPE_OF(int16_t, int16)
AG_DTYPE_OF(uint16_t, uint16)
AG_DTYPE_OF(uint32_t, uint32)
AG_DTYPE_OF(uint64_t, uint64)
AG_DTYPE_OF(float16_t, float16)
AG_DTYPE_OF(bfloat16_t, bfloat16)
#undef AG_DTYPE_OF
template <class T>
inline constexpr DType dtype_v = dtype_of<T>::value;

namespace detail {
// InternalError: a storage dtype reached code that computes (a bug: ops::apply
// widens them first); for string, the InvalidArgumentError of reading
// strings as numbers.
[[noreturn]] void throw_not_compute_dtype(DType dtype);
}  // namespace detail

// Calls `f(T{})` with T the C++ type of `dtype`, one of the five compute
// dtypes: kernels instantiate only these.
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::float32:
      return f(float{});
    case DType::float64:
      return f(double{});
    case DType::int32:
      return f(int32_t{});
    case DType::int64:
      return f(int64_t{});
    case DType::bool_:
      break;
    default:
      detail::throw_not_compute_dtype(dtype);
  }
  return f(bool{});
}

// Calls `f(T{})` with T the C++ type of any dtype: for code that stores,
// converts or prints elements.
template <class F>
decltype(auto) visit_storage_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::uint8:
      return f(uint8_t{});
    case DType::int8:
      return f(int8_t{});
    case DType::int16:
      return f(int16_t{});
    case DType::uint16:
      return f(uint16_t{});
    case DType::uint32:
      return f(uint32_t{});
    case DType::uint64:
      return f(uint64_t{});
    case DType::float16:
      return f(float16_t{});
    case DType::bfloat16:
      return f(bfloat16_t{});
    default:
      return visit_dtype(dtype, f);
  }
}

}  // namespace ag
