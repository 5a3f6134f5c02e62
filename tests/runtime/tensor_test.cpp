#include <gtest/gtest.h>

#include <ag/ag.h>

namespace {

TEST(Tensor, ScalarConstantsInferTensorFlowDtypes) {
  EXPECT_EQ(ag::constant(1).dtype(), ag::int32);
  EXPECT_EQ(ag::constant(1.5).dtype(), ag::float32);
  EXPECT_EQ(ag::constant(true).dtype(), ag::bool_);
  EXPECT_EQ(ag::Tensor(int64_t{3}).dtype(), ag::int64);
  EXPECT_EQ(ag::constant({1.0, 2.0}, ag::float64).dtype(), ag::float64);
}

TEST(Tensor, NestedListGivesShapeAndValues) {
  ag::Tensor t = ag::constant({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(t.shape(), (ag::Shape{2, 3}));
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Tensor, RaggedListIsAnError) {
  try {
    ag::constant({{1, 2}, {3}});
    FAIL() << "expected an error";
  } catch (const ag::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("ragged"), std::string::npos) << e.what();
  }
}

TEST(Tensor, CopyNeverAliasesALaterWrite) {
  ag::Tensor a = ag::constant({1, 2, 3});
  ag::Tensor b = a;
  b.mutable_data<int32_t>()[0] = 100;
  EXPECT_EQ(a.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(b.to_vector<int32_t>(), (std::vector<int32_t>{100, 2, 3}));
}

TEST(Tensor, StorageIs64ByteAligned) {
  for (int n : {1, 3, 17, 1000}) {
    ag::Tensor t = ag::zeros(ag::Shape{n}, ag::float32);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % 64, 0u);
  }
}

TEST(Tensor, PrintsLikeTensorFlow) {
  EXPECT_EQ(ag::constant({1, 2, 3}).to_string(), "ag::Tensor([1 2 3], shape=(3,), dtype=int32)");
  EXPECT_EQ(ag::constant(5.5).to_string(), "ag::Tensor(5.5, shape=(), dtype=float32)");
  EXPECT_EQ(ag::constant({1.0, 0.0}).to_string(), "ag::Tensor([1. 0.], shape=(2,), dtype=float32)");
  EXPECT_EQ(ag::constant({{1, 2}, {3, 4}}).to_string(),
            "ag::Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)");
  EXPECT_EQ(ag::constant({true, false}).to_string(),
            "ag::Tensor([ True False], shape=(2,), dtype=bool)");
  EXPECT_EQ(ag::constant({1, -10}).to_string(), "ag::Tensor([  1 -10], shape=(2,), dtype=int32)");
}

TEST(Tensor, LargeTensorsAreSummarised) {
  std::vector<int32_t> v(2000);
  for (int i = 0; i < 2000; ++i) v[size_t(i)] = i;
  ag::Tensor t = ag::constant(v, ag::Shape{2000});
  EXPECT_EQ(t.values_string(), "[0 1 2 ... 1997 1998 1999]");
}

TEST(Tensor, ItemAndBoolConversion) {
  EXPECT_EQ(ag::constant(7).item<int>(), 7);
  EXPECT_TRUE(static_cast<bool>(ag::constant(true)));
  EXPECT_THROW(static_cast<bool>(ag::constant({true, false})), ag::InvalidArgumentError);
  EXPECT_THROW(ag::Tensor().dtype(), ag::FailedPreconditionError);
}

TEST(Tensor, EyeFillZerosOnes) {
  EXPECT_EQ(ag::eye(2, ag::int32).to_vector<int>(), (std::vector<int>{1, 0, 0, 1}));
  EXPECT_EQ(ag::fill(ag::Shape{2}, 3.5).to_vector<float>(), (std::vector<float>{3.5f, 3.5f}));
  EXPECT_EQ(ag::ones(ag::Shape{2, 1}, ag::int64).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 1}));
}

TEST(Tensor, EigenRoundTrip) {
  Eigen::MatrixXd m(2, 2);
  m << 1, 2, 3, 4;
  ag::Tensor t = ag::from_eigen(m);
  EXPECT_EQ(t.dtype(), ag::float64);
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(ag::to_eigen<double>(t), m);
}

}  // namespace
