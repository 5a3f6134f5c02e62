// ONNX TensorProto and type protos <-> ag tensors, dtypes and specs.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "ag/tensor.h"

namespace ag::onnx_io {

// The ag dtype of an ONNX element type; `what` names the value in the
// UnimplementedError for a type we do not have (float16, uint8, string, ...).
DType dtype_from_onnx(int32_t elem_type, const std::string& what);
// "FLOAT", "INT64", "FLOAT16", ...
std::string onnx_type_name(int32_t elem_type);

// A tensor holding the proto's values (raw_data or the typed field).
Tensor tensor_from_proto(const ::onnx::TensorProto& proto, const std::string& what);

// The spec of a graph input or output; dims without a value are unknown.
TensorSpec spec_from_value_info(const ::onnx::ValueInfoProto& info);

}  // namespace ag::onnx_io
