// String tensors in ONNX: TensorProto's string_data both ways, graphs with
// string inputs and constants saved (ONNX's checker runs in save), loaded
// back and run, and the error for the string ops that opset 17 lacks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <ag/ag.h>
#include <ag/onnx.h>

#include "exporter.h"
#include "round_trip.h"
#include "tensor_proto.h"

namespace {

using ::onnx::TensorProto;
using Strings = std::vector<std::string>;

TEST(OnnxStrings, TensorProtoKeepsStringsInStringData) {
  const ag::Tensor t = ag::constant({{"a", ""}, {std::string("\0b", 2), "cd"}});
  const TensorProto proto = ag::onnx_io::tensor_to_proto(t, "t");
  EXPECT_EQ(proto.data_type(), TensorProto::STRING);
  EXPECT_FALSE(proto.has_raw_data());
  ASSERT_EQ(proto.string_data_size(), 4);
  EXPECT_EQ(proto.string_data(2), std::string("\0b", 2));
  const ag::Tensor back = ag::onnx_io::tensor_from_proto(proto, "t");
  EXPECT_EQ(back.spec(), t.spec());
  EXPECT_EQ(ag::strings::to_vector(back), ag::strings::to_vector(t));
}

TEST(OnnxStrings, TensorProtoWithTooFewStringsIsAnError) {
  TensorProto proto;
  proto.set_data_type(TensorProto::STRING);
  proto.add_dims(2);
  proto.add_string_data("only");
  try {
    ag::onnx_io::tensor_from_proto(proto, "w");
    FAIL() << "expected an error";
  } catch (const ag::InvalidArgumentError& e) {
    EXPECT_EQ(e.message(), "w: holds 1 strings for a shape of 2 elements");
  }
}

TEST(OnnxStrings, GraphOfStringInputsAndConstantsRoundTrips) {
  auto f = ag::function([](const ag::Tensor& words, const ag::Tensor& pick) {
    const ag::Tensor all = ag::concat({words, ag::constant({"z", "it's"})}, 0);
    const ag::Tensor chosen = ag::gather(all, pick);
    return ag::where(ag::constant({true, false, true}), chosen, ag::reverse(chosen, {0}));
  });
  const ag::Tensor words = ag::constant({"x", "y"});
  const ag::Tensor pick = ag::constant({3, 0, 1});
  const ag::Tensor want = f(words, pick);
  EXPECT_EQ(ag::strings::to_vector(want), (Strings{"it's", "x", "y"}));
  EXPECT_EQ(ag_onnx_test::round_trip(f.get_concrete_function(words, pick).graph(),
                                     "strings_gather_concat", {words, pick}, {want}),
            "");
}

TEST(OnnxStrings, StringOpsOutsideOpset17SayWhy) {
  auto f = ag::function([](const ag::Tensor& s) { return s + s; });
  const ag::Graph graph = f.get_concrete_function(ag::TensorSpec({}, ag::string)).graph();
  try {
    ag::onnx::save_to_bytes(graph, {});
    FAIL() << "expected an UnimplementedError";
  } catch (const ag::UnimplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("string_join"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("from opset 20 on (StringConcat)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
