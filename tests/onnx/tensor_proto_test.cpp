// TensorProto load and save of every dtype: raw_data both ways bit for bit,
// and the typed fields ONNX keeps the storage dtypes in.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "exporter.h"
#include "tensor_proto.h"

namespace {

using ::onnx::TensorProto;

std::vector<uint16_t> bits_of(const ag::Tensor& t) {
  std::vector<uint16_t> bits(size_t(t.num_elements()));
  std::memcpy(bits.data(), t.raw_data(), bits.size() * 2);
  return bits;
}

// Every 16-bit pattern, NaNs with payloads included, survives a save and a load.
TEST(OnnxTensorProto, Float16AndBFloat16BitPatternsRoundTripExactly) {
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = uint16_t(i);
  for (ag::DType d : {ag::float16, ag::bfloat16}) {
    ag::Tensor t = ag::empty({int64_t(all.size())}, d);
    std::memcpy(t.raw_mutable_data(), all.data(), all.size() * 2);
    const TensorProto proto = ag::onnx_io::tensor_to_proto(t, "t");
    EXPECT_EQ(proto.data_type(), d == ag::float16 ? TensorProto::FLOAT16 : TensorProto::BFLOAT16);
    const ag::Tensor back = ag::onnx_io::tensor_from_proto(proto, "t");
    EXPECT_EQ(back.dtype(), d);
    EXPECT_EQ(bits_of(back), all);
  }
}

TEST(OnnxTensorProto, EveryDtypeRoundTripsThroughRawData) {
  for (ag::DType d : ag::kAllDTypes) {
    SCOPED_TRACE(std::string(ag::dtype_name(d)));
    const ag::Tensor t = ag::cast(ag::constant({0.0, 1.0, 2.5, 100.0}), d);
    const ag::Tensor back =
        ag::onnx_io::tensor_from_proto(ag::onnx_io::tensor_to_proto(t, "t"), "t");
    ASSERT_EQ(back.dtype(), d);
    EXPECT_EQ(std::memcmp(back.raw_data(), t.raw_data(), 4 * ag::dtype_size(d)), 0);
  }
}

// The typed fields: int32_data for the small integers and the bits of
// float16/bfloat16, uint64_data for uint32 and uint64.
TEST(OnnxTensorProto, StorageDtypesLoadFromTheirTypedFields) {
  TensorProto h;
  h.set_data_type(TensorProto::FLOAT16);
  h.add_dims(2);
  h.add_int32_data(0x3c00);  // 1.0
  h.add_int32_data(0x7e01);  // a NaN with a payload
  EXPECT_EQ(bits_of(ag::onnx_io::tensor_from_proto(h, "h")),
            (std::vector<uint16_t>{0x3c00, 0x7e01}));

  TensorProto u;
  u.set_data_type(TensorProto::UINT64);
  u.add_dims(2);
  u.add_uint64_data(18446744073709551615ull);
  u.add_uint64_data(7);
  EXPECT_EQ(ag::onnx_io::tensor_from_proto(u, "u").to_vector<uint64_t>(),
            (std::vector<uint64_t>{18446744073709551615ull, 7}));

  TensorProto s;
  s.set_data_type(TensorProto::INT8);
  s.add_dims(2);
  s.add_int32_data(-128);
  s.add_int32_data(127);
  const ag::Tensor i8 = ag::onnx_io::tensor_from_proto(s, "s");
  EXPECT_EQ(i8.dtype(), ag::int8);
  EXPECT_EQ(i8.to_vector<int>(), (std::vector<int>{-128, 127}));
}

TEST(OnnxTensorProto, AnUnsupportedElementTypeNamesTheSupportedOnes) {
  TensorProto s;
  s.set_data_type(TensorProto::COMPLEX64);
  try {
    ag::onnx_io::tensor_from_proto(s, "initializer 'x'");
    ADD_FAILURE() << "expected an error";
  } catch (const ag::UnimplementedError& e) {
    EXPECT_EQ(e.message(),
              "initializer 'x': element type COMPLEX64 is not supported (supported: FLOAT, "
              "DOUBLE, FLOAT16, BFLOAT16, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, "
              "UINT64, BOOL, STRING)");
  }
}

}  // namespace
