// Element types and the type promotion rules.
//
// Promotion (used by every binary op and by `where`):
//
//   1. Two tensors: the result is the larger type on the lattice
//        bool < int32 < int64 < float32 < float64
//      (as JAX does; int64 + float32 -> float32). The smaller operand is cast.
//   2. A tensor and a C++ scalar: the scalar is "weak", like a Python scalar in
//      TensorFlow. It takes the tensor's dtype when its kind fits:
//        int32 tensor * 2     -> int32
//        float32 tensor + 1.5 -> float32
//        bool tensor + 1      -> int32   (an integer scalar lifts bool to int32)
//        int32 tensor * 1.5   -> float32 (a floating scalar lifts ints to float32)
//      A C++ `bool` scalar is weak bool; `double`/`float` are weak float;
//      every other arithmetic type is weak int.
//   3. Ops with a fixed result type ignore the rule: comparisons and logical
//      ops give bool, `cast` gives what it is asked for, `divide` on integers
//      gives float64 (true division, as TensorFlow's `/`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ag {

enum class DType : uint8_t { float32, float64, int32, int64, bool_ };

inline constexpr DType float32 = DType::float32;
inline constexpr DType float64 = DType::float64;
inline constexpr DType int32 = DType::int32;
inline constexpr DType int64 = DType::int64;
inline constexpr DType bool_ = DType::bool_;

// "float32", "int32", "bool", ...
std::string_view dtype_name(DType dtype);
size_t dtype_size(DType dtype);
inline bool is_floating(DType d) {
  return d == DType::float32 || d == DType::float64;
}
inline bool is_integer(DType d) {
  return d == DType::int32 || d == DType::int64;
}

// Rule 1 above.
DType promote_types(DType a, DType b);

// The kind of a C++ scalar in rule 2.
enum class ScalarKind : uint8_t { boolean, integer, floating };
// Rule 2: the dtype a weak scalar of `kind` combined with a `tensor` dtype gives.
DType promote_with_scalar(DType tensor, ScalarKind kind);

// C++ type <-> DType.
template <class T>
struct dtype_of;
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::float32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::float64;
};
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = DType::int32;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = DType::int64;
};
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::bool_;
};
template <class T>
inline constexpr DType dtype_v = dtype_of<T>::value;

// Calls `f(T{})` with T the C++ type of `dtype`.
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
  }
  return f(bool{});
}

}  // namespace ag
