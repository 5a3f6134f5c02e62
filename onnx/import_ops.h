// The importer of every op type of onnx/ops.def.
#pragma once

#include "importer.h"

namespace ag::onnx_io {

#define AG_ONNX_OP(op_type, fn) std::vector<Tensor> fn(NodeContext& ctx);
#include "ops.def"
#undef AG_ONNX_OP

}  // namespace ag::onnx_io
