// pad's attrs (ag/ops.def): ints = [mode, before_0, after_0, before_1,
// after_1, ...], the constant in lo. Read by the op (library/pad.cpp) and
// its ONNX export.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ops/op_registry.h"

namespace ag::ops {

enum class PadMode : int64_t { kConstant, kReflect, kSymmetric, kEdge };

inline const char* pad_mode_name(PadMode mode) {
  switch (mode) {
    case PadMode::kReflect:
      return "REFLECT";
    case PadMode::kSymmetric:
      return "SYMMETRIC";
    case PadMode::kEdge:
      return "EDGE";
    case PadMode::kConstant:
      break;
  }
  return "CONSTANT";
}

struct PadAttrs {
  PadMode mode = PadMode::kConstant;
  std::vector<std::pair<int64_t, int64_t>> paddings;  // per dimension
  double constant = 0;

  static PadAttrs decode(const Attrs& attrs) {
    PadAttrs a;
    a.mode = PadMode(attrs.ints.at(0));
    for (size_t i = 1; i + 1 < attrs.ints.size(); i += 2) {
      a.paddings.emplace_back(attrs.ints[i], attrs.ints[i + 1]);
    }
    a.constant = attrs.lo;
    return a;
  }
};

}  // namespace ag::ops
