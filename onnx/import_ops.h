// The importer of every op type of onnx/ops.def, and the helpers importers
// of more than one family share.
#pragma once

#include <functional>
#include <utility>

#include "importer.h"

namespace ag::onnx_io {

#define AG_ONNX_OP(op_type, fn) std::vector<Tensor> fn(NodeContext& ctx);
#include "ops.def"
#undef AG_ONNX_OP

// The operands of a binary op. Before opset 7, `broadcast=1` with `axis`
// aligned b's dims with a's from `axis` on (b: [3], a: [2, 3, 4], axis 1).
// (import_elementwise.cpp)
std::pair<Tensor, Tensor> operands(NodeContext& ctx);

// Softmax, LogSoftmax and Hardmax: `f(x, axis)` along one axis of the node's
// input. From opset 13 that is attribute `axis` (default -1); before, the
// input is flattened to 2-D at `axis` (default 1), `f` runs along the second
// dim, and the result takes the input's shape again. (import_activation.cpp)
std::vector<Tensor> along_axis(NodeContext& ctx,
                               const std::function<Tensor(const Tensor&, int64_t)>& f);

}  // namespace ag::onnx_io
