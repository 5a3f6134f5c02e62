#include <gtest/gtest.h>

#include <ag/ag.h>
#include <ag/eigen.h>

#include <sstream>

namespace {

TEST(Tensor, ScalarConstantsInferTensorFlowDtypes) {
  EXPECT_EQ(ag::constant(1).dtype(), ag::int32);
  EXPECT_EQ(ag::constant(1.5).dtype(), ag::float32);
  EXPECT_EQ(ag::constant(true).dtype(), ag::bool_);
  EXPECT_EQ(ag::Tensor(int64_t{3}).dtype(), ag::int64);
  EXPECT_EQ(ag::constant({1.0, 2.0}, ag::float64).dtype(), ag::float64);
}

TEST(Tensor, IntegersBeyondInt32GiveInt64) {
  ag::Tensor t = ag::constant({int64_t{1}, int64_t{5000000000}});
  EXPECT_EQ(t.dtype(), ag::int64);
  EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{1, 5000000000}));
  EXPECT_EQ(ag::constant({int64_t{1}, int64_t{-2}}).dtype(), ag::int32);
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

// The two ways a nested list is ragged, named with the depth and the counts;
// string lists (strings_test.cpp) share the check.
TEST(Tensor, RaggedListErrorsNameTheDepthAndTheCounts) {
  auto message = [](auto make) {
    try {
      make();
    } catch (const ag::InvalidArgumentError& e) {
      return e.message();
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([] { ag::constant({{1, 2}, {3}}); }),
            "ragged nested list: expected 2 elements at depth 1, got a list of 1");
  EXPECT_EQ(message([] { ag::constant({{1, 2}, 3}); }),
            "ragged nested list: a value at depth 1 where shape (2, 2) expects a list");
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

// A freed large block serves the next tensor of its size: its pages are
// not faulted in again (core/block_cache.h).
TEST(Tensor, ALargeBlockIsReusedByTheNextTensorOfItsSize) {
  const void* first = nullptr;
  {
    ag::Tensor t = ag::zeros(ag::Shape{256, 1024}, ag::float32);
    first = t.raw_data();
  }
  ag::Tensor again = ag::ones(ag::Shape{1024, 256}, ag::float32);
  EXPECT_EQ(again.raw_data(), first);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(again.raw_data()) % 64, 0u);
  EXPECT_EQ(ag::reduce_sum(again).item<float>(), 262144.0f);
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

// Every C++ arithmetic type reads and builds a tensor, converting as C++ does.
TEST(Tensor, ElementAccessorsTakeEveryArithmeticType) {
  ag::Tensor t = ag::constant({-1.5, 2.0, 300.0});
  EXPECT_EQ(t.to_vector<int16_t>(), (std::vector<int16_t>{-1, 2, 300}));
  EXPECT_EQ(t.to_vector<long double>(), (std::vector<long double>{-1.5L, 2.0L, 300.0L}));
  EXPECT_EQ(ag::reduce_sum(t).item<unsigned short>(), 300);
  ag::Tensor bytes = ag::constant(std::vector<uint8_t>{7, 250}, ag::Shape{2});
  EXPECT_EQ(bytes.dtype(), ag::int32);
  EXPECT_EQ(bytes.to_vector<int>(), (std::vector<int>{7, 250}));
  ag::Tensor wide = ag::constant(std::vector<unsigned long>{1ul << 40}, ag::Shape{1});
  EXPECT_EQ(wide.dtype(), ag::int64);
  EXPECT_EQ(wide.item<unsigned long>(), 1ul << 40);
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

TEST(Tensor, PrintsFloatsWithNumPyPadding) {
  EXPECT_EQ(ag::constant({1.0, 2.5}).to_string(),
            "ag::Tensor([1.  2.5], shape=(2,), dtype=float32)");
  EXPECT_EQ(ag::constant({1.5, 10.25}).to_string(),
            "ag::Tensor([ 1.5  10.25], shape=(2,), dtype=float32)");
  EXPECT_EQ(ag::constant({-0.5, 0.1}, ag::float64).to_string(),
            "ag::Tensor([-0.5  0.1], shape=(2,), dtype=float64)");
  EXPECT_EQ(ag::constant({{1.0, 2.0}, {3.0, 4.5}}).to_string(),
            "ag::Tensor(\n[[1.  2. ]\n [3.  4.5]], shape=(2, 2), dtype=float32)");
}

TEST(Tensor, PrintsSpecialValuesAndScalars) {
  ag::Tensor special = ag::constant({1.0, 0.0, -1.0}) / ag::constant({0.0, 0.0, 0.0});
  EXPECT_EQ(special.values_string(), "[inf nan -inf]");
  EXPECT_EQ(ag::constant(true).to_string(), "ag::Tensor(True, shape=(), dtype=bool)");
  EXPECT_EQ(ag::Tensor(int64_t{-3}).to_string(), "ag::Tensor(-3, shape=(), dtype=int64)");
  EXPECT_EQ(ag::zeros(ag::Shape{0, 2}).to_string(), "ag::Tensor([], shape=(0, 2), dtype=float32)");
  EXPECT_EQ(ag::Tensor().to_string(), "ag::Tensor(<undefined>)");
}

TEST(Tensor, PrintsThreeDimensionalTensorsWithBlankLines) {
  EXPECT_EQ(ag::reshape(ag::range(8), {2, 2, 2}).values_string(),
            "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
}

TEST(Tensor, SummarisesMatricesByRowsAndColumns) {
  ag::Tensor t = ag::reshape(ag::range(40 * 50), {40, 50});
  std::string expected =
      "[[   0    1    2 ...   47   48   49]\n"
      " [  50   51   52 ...   97   98   99]\n"
      " [ 100  101  102 ...  147  148  149]\n"
      " ...\n"
      " [1850 1851 1852 ... 1897 1898 1899]\n"
      " [1900 1901 1902 ... 1947 1948 1949]\n"
      " [1950 1951 1952 ... 1997 1998 1999]]";
  EXPECT_EQ(t.to_string(), "ag::Tensor(\n" + expected + ", shape=(40, 50), dtype=int32)");
}

TEST(Tensor, SummarisesThreeDimensionalTensorsLikeNumPy) {
  ag::Tensor t = ag::reshape(ag::range(7 * 150), {7, 1, 150});
  EXPECT_EQ(t.to_string(),
            "ag::Tensor(\n"
            "[[[   0    1    2 ...  147  148  149]]\n\n"
            " [[ 150  151  152 ...  297  298  299]]\n\n"
            " [[ 300  301  302 ...  447  448  449]]\n\n"
            " ...\n\n"
            " [[ 600  601  602 ...  747  748  749]]\n\n"
            " [[ 750  751  752 ...  897  898  899]]\n\n"
            " [[ 900  901  902 ... 1047 1048 1049]]], shape=(7, 1, 150), dtype=int32)");
}

TEST(Tensor, ValuesStringTakesAnEdgeCount) {
  EXPECT_EQ(ag::range(10).values_string(1), "[0 ... 9]");
  EXPECT_EQ(ag::range(10).values_string(), "[0 1 2 3 4 5 6 7 8 9]");
}

TEST(Tensor, StreamsAndSpecs) {
  std::ostringstream os;
  os << ag::constant({1, 2}) << " " << ag::float64 << " " << ag::Shape{2, ag::kUnknownDim};
  EXPECT_EQ(os.str(), "ag::Tensor([1 2], shape=(2,), dtype=int32) float64 (2, None)");
  EXPECT_EQ(ag::constant({1.0}).spec().to_string(), "TensorSpec(shape=(1,), dtype=float32)");
}

TEST(Tensor, WritingThroughACopyNeverChangesAnOpResult) {
  ag::Tensor a = ag::constant({1, 2}) + 0;
  ag::Tensor b = a;
  ag::Tensor c = ag::reshape(a, {2, 1});
  b.mutable_data<int32_t>()[1] = 7;
  c.mutable_data<int32_t>()[0] = 9;
  EXPECT_EQ(a.to_vector<int32_t>(), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(b.to_vector<int32_t>(), (std::vector<int32_t>{1, 7}));
  EXPECT_EQ(c.to_vector<int32_t>(), (std::vector<int32_t>{9, 2}));
}

TEST(Tensor, DataAccessChecksTheDtype) {
  ag::Tensor t = ag::constant({1});
  EXPECT_THROW(t.data<float>(), ag::TypeError);
  EXPECT_THROW(ag::constant({1, 2}).item<int>(), ag::InvalidArgumentError);
}

}  // namespace
