#include "ag/dtype.h"

#include <algorithm>

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
  }
  return "?";
}

size_t dtype_size(DType dtype) {
  return visit_dtype(dtype, [](auto v) { return sizeof(v); });
}

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
  }
  return 0;
}
}  // namespace

DType promote_types(DType a, DType b) {
  return rank_of(a) >= rank_of(b) ? a : b;
}

DType promote_with_scalar(DType tensor, ScalarKind kind) {
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

}  // namespace ag
