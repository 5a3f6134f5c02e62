#include "tensor_proto.h"

#include <cstring>

#include "ag/error.h"
#include "ag/strings.h"

namespace ag::onnx_io {

using ::onnx::TensorProto;

std::string onnx_type_name(int32_t elem_type) {
  if (TensorProto::DataType_IsValid(elem_type))
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(elem_type));
  return "type " + std::to_string(elem_type);
}

DType dtype_from_onnx(int32_t elem_type, const std::string& what) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      return DType::float32;
    case TensorProto::DOUBLE:
      return DType::float64;
    case TensorProto::INT32:
      return DType::int32;
    case TensorProto::INT64:
      return DType::int64;
    case TensorProto::BOOL:
      return DType::bool_;
    case TensorProto::UINT8:
      return DType::uint8;
    case TensorProto::INT8:
      return DType::int8;
    case TensorProto::INT16:
      return DType::int16;
    case TensorProto::UINT16:
      return DType::uint16;
    case TensorProto::UINT32:
      return DType::uint32;
    case TensorProto::UINT64:
      return DType::uint64;
    case TensorProto::FLOAT16:
      return DType::float16;
    case TensorProto::BFLOAT16:
      return DType::bfloat16;
    case TensorProto::STRING:
      return DType::string;
    default:
      throw UnimplementedError(
          what + ": element type " + onnx_type_name(elem_type) +
          " is not supported (supported: FLOAT, DOUBLE, FLOAT16, BFLOAT16, "
          "INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, BOOL, STRING)");
  }
}

namespace {

Shape shape_from_dims(const TensorProto& proto, const std::string& what) {
  if (proto.dims_size() > Shape::kMaxRank) {
    throw UnimplementedError(what + ": rank " + std::to_string(proto.dims_size()) +
                             " is above the largest supported rank, " +
                             std::to_string(Shape::kMaxRank));
  }
  Shape shape;
  for (int64_t d : proto.dims()) {
    if (d < 0) throw InvalidArgumentError(what + ": negative dim " + std::to_string(d));
    shape.push_back(d);
  }
  return shape;
}

// Copies `count` values of the typed field into `out`, converting from the
// field's element type (int32_data also carries BOOL).
template <class T, class Field>
void copy_field(const Field& field, T* out, int64_t count, const std::string& what) {
  if (field.size() != count) {
    throw InvalidArgumentError(what + ": holds " + std::to_string(field.size()) +
                               " values for a shape of " + std::to_string(count) + " elements");
  }
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(field.Get(int(i)));
}

}  // namespace

Tensor tensor_from_proto(const TensorProto& proto, const std::string& what) {
  if (proto.data_location() == TensorProto::EXTERNAL) {
    throw UnimplementedError(what + ": tensors stored in external data files are not supported");
  }
  DType dtype = dtype_from_onnx(proto.data_type(), what);
  Shape shape = shape_from_dims(proto, what);
  const int64_t count = shape.num_elements();
  if (dtype == DType::string) {
    if (proto.string_data_size() != count) {
      throw InvalidArgumentError(what + ": holds " + std::to_string(proto.string_data_size()) +
                                 " strings for a shape of " + std::to_string(count) + " elements");
    }
    return constant(
        std::vector<std::string>(proto.string_data().begin(), proto.string_data().end()), shape);
  }
  Tensor t = empty(shape, dtype);
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != size_t(count) * dtype_size(dtype)) {
      throw InvalidArgumentError(what + ": raw_data has " + std::to_string(raw.size()) +
                                 " bytes for " + std::to_string(count) + " elements of " +
                                 onnx_type_name(proto.data_type()));
    }
    // ONNX stores raw data little-endian, as this machine does.
    if (count > 0) std::memcpy(t.raw_mutable_data(), raw.data(), raw.size());
    return t;
  }
  switch (dtype) {
    case DType::float32:
      copy_field(proto.float_data(), t.mutable_data<float>(), count, what);
      break;
    case DType::float64:
      copy_field(proto.double_data(), t.mutable_data<double>(), count, what);
      break;
    case DType::int32:
      copy_field(proto.int32_data(), t.mutable_data<int32_t>(), count, what);
      break;
    case DType::int64:
      copy_field(proto.int64_data(), t.mutable_data<int64_t>(), count, what);
      break;
    case DType::bool_:
      copy_field(proto.int32_data(), t.mutable_data<bool>(), count, what);
      break;
    // ONNX keeps the small types in int32_data (float16 and bfloat16 as
    // their bits), uint32 and uint64 in uint64_data.
    case DType::uint8:
      copy_field(proto.int32_data(), static_cast<uint8_t*>(t.raw_mutable_data()), count, what);
      break;
    case DType::int8:
      copy_field(proto.int32_data(), static_cast<int8_t*>(t.raw_mutable_data()), count, what);
      break;
    case DType::int16:
      copy_field(proto.int32_data(), static_cast<int16_t*>(t.raw_mutable_data()), count, what);
      break;
    case DType::uint16:
    case DType::float16:
    case DType::bfloat16:
      copy_field(proto.int32_data(), static_cast<uint16_t*>(t.raw_mutable_data()), count, what);
      break;
    case DType::uint32:
      copy_field(proto.uint64_data(), static_cast<uint32_t*>(t.raw_mutable_data()), count, what);
      break;
    case DType::uint64:
      copy_field(proto.uint64_data(), static_cast<uint64_t*>(t.raw_mutable_data()), count, what);
      break;
    case DType::string:
      break;  // read above
  }
  return t;
}

TensorSpec spec_from_value_info(const ::onnx::ValueInfoProto& info) {
  const std::string what = "graph value '" + info.name() + "'";
  if (!info.type().has_tensor_type()) {
    const char* kind = info.type().has_sequence_type() ? "a sequence" : "not a tensor";
    throw UnimplementedError(what + " is " + kind +
                             "; ag::onnx::load takes and returns tensors only (sequences "
                             "inside the graph are supported, as stacked tensors)");
  }
  const auto& tensor_type = info.type().tensor_type();
  DType dtype = dtype_from_onnx(tensor_type.elem_type(), what);
  if (!tensor_type.has_shape()) return TensorSpec(Shape::unknown_rank(), dtype);
  Shape shape;
  for (const auto& dim : tensor_type.shape().dim())
    shape.push_back(dim.has_dim_value() ? dim.dim_value() : kUnknownDim);
  return TensorSpec(shape, dtype);
}

}  // namespace ag::onnx_io
