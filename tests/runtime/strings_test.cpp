// String tensors (ag/strings.h, docs/strings.md): constants, printing, the
// string ops' values and errors, data movement, and each eager call against
// its trace.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"
#include "graph/graph_text.h"

namespace {

using ag::Tensor;
using Strings = std::vector<std::string>;

Strings values(const Tensor& t) {
  return ag::strings::to_vector(t);
}

// `f` eagerly and traced (first call and cached call) give the same tensor.
template <class F, class... Args>
Tensor eager_equals_traced(F f, const Args&... args) {
  const Tensor eager = f(args...);
  auto traced = ag::function(f);
  for (int call = 0; call < 2; ++call) {
    const Tensor graph = traced(args...);
    EXPECT_EQ(graph.spec(), eager.spec()) << "call " << call;
    EXPECT_EQ(graph.to_string(), eager.to_string()) << "call " << call;
  }
  EXPECT_EQ(traced.tracing_count(), 1);
  return eager;
}

TEST(StringConstants, ScalarVectorAndShapedForms) {
  const Tensor a = ag::constant("a");
  EXPECT_EQ(a.dtype(), ag::string);
  EXPECT_EQ(a.shape(), ag::Shape{});
  EXPECT_EQ(ag::strings::item(a), "a");
  const Tensor v = ag::constant({"a", "bc", ""});
  EXPECT_EQ(v.shape(), ag::Shape{3});
  EXPECT_EQ(values(v), (Strings{"a", "bc", ""}));
  const Tensor m = ag::constant({{"a", "b"}, {"c", "d"}});
  EXPECT_EQ(m.shape(), (ag::Shape{2, 2}));
  const Tensor shaped = ag::constant(Strings{"w", "x", "y", "z", "", "!"}, {3, 2});
  EXPECT_EQ(shaped.shape(), (ag::Shape{3, 2}));
  EXPECT_EQ(values(shaped)[5], "!");
  // Bytes, not text: an embedded NUL and high bytes stay.
  const std::string bytes("\0\xff", 2);
  EXPECT_EQ(ag::strings::item(ag::constant(bytes)), bytes);
}

TEST(StringConstants, NumbersStillMakeNumericConstants) {
  EXPECT_EQ(ag::constant(0).dtype(), ag::int32);
  EXPECT_EQ(ag::constant({true, false}).dtype(), ag::bool_);
  EXPECT_EQ(ag::constant({1.5, 2.0}).dtype(), ag::float32);
}

TEST(StringConstants, RaggedListsAndWrongCountsAreErrors) {
  EXPECT_THROW_CONTAINS(ag::constant({{"a", "b"}, {"c"}}), ag::InvalidArgumentError,
                        "ragged nested list: expected 2 elements at depth 1, got a list of 1");
  EXPECT_THROW_CONTAINS(
      ag::constant({{"a", "b"}, "c"}), ag::InvalidArgumentError,
      "ragged nested list: a string at depth 1 where shape (2, 2) expects a list");
  EXPECT_THROW_CONTAINS(ag::constant(Strings{"a", "b", "c"}, {2, 2}), ag::InvalidArgumentError,
                        "3 strings do not fill shape (2, 2)");
}

TEST(StringPrinting, AsTensorFlowPrintsBytes) {
  EXPECT_EQ(ag::constant("aa").to_string(), "ag::Tensor(b'aa', shape=(), dtype=string)");
  EXPECT_EQ(ag::constant({"a", "bc"}).to_string(),
            "ag::Tensor([b'a' b'bc'], shape=(2,), dtype=string)");
  EXPECT_EQ(ag::constant({{"a", "b"}, {"c", "d"}}).to_string(),
            "ag::Tensor(\n[[b'a' b'b']\n [b'c' b'd']], shape=(2, 2), dtype=string)");
  // Python's escapes, and its choice of quotes.
  EXPECT_EQ(ag::constant(std::string("t\tn\nq'\\\x01\xe9", 9)).values_string(),
            "b\"t\\tn\\nq'\\\\\\x01\\xe9\"");
  EXPECT_EQ(ag::constant("'\"").values_string(), "b'\\'\"'");
  EXPECT_EQ(ag::zeros({2}, ag::string).values_string(), "[b'' b'']");
}

TEST(StringOps, PlusJoinsWithBroadcasting) {
  const Tensor a = ag::constant({"x", "y"});
  EXPECT_EQ(values(a + a), (Strings{"xx", "yy"}));
  EXPECT_EQ(values(a + ag::constant("!")), (Strings{"x!", "y!"}));
  const Tensor col = ag::reshape(ag::constant({"a", "b"}), {2, 1});
  EXPECT_EQ(values(col + a), (Strings{"ax", "ay", "bx", "by"}));
  EXPECT_EQ(values(ag::strings::join({a, ag::constant("1"), a}, "-")), (Strings{"x-1-x", "y-1-y"}));
}

TEST(StringOps, EqualAndNotEqualGiveBools) {
  const Tensor a = ag::constant({"x", "y", ""});
  const Tensor b = ag::constant({"x", "z", ""});
  EXPECT_EQ((a == b).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ((a != b).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ((a == ag::constant("y")).to_vector<bool>(), (std::vector<bool>{false, true, false}));
}

TEST(StringOps, LengthAndSubstr) {
  const Tensor s = ag::constant({"hello", "", "ab"});
  const Tensor n = ag::strings::length(s);
  EXPECT_EQ(n.dtype(), ag::int32);
  EXPECT_EQ(n.to_vector<int32_t>(), (std::vector<int32_t>{5, 0, 2}));
  const Tensor words = ag::constant({"hello", "world"});
  EXPECT_EQ(values(ag::strings::substr(words, 1, 3)), (Strings{"ell", "orl"}));
  EXPECT_EQ(values(ag::strings::substr(words, -2, 10)), (Strings{"lo", "ld"}));
  EXPECT_EQ(values(ag::strings::substr(words, 5, 1)), (Strings{"", ""}));
  // A negative len takes the rest of the string, as TensorFlow's does.
  EXPECT_EQ(values(ag::strings::substr(words, 1, -1)), (Strings{"ello", "orld"}));
  EXPECT_EQ(values(ag::strings::substr(words, -3, -7)), (Strings{"llo", "rld"}));
  EXPECT_EQ(ag_test::error_of([&] { ag::strings::substr(s, 3, 1); }),
            "InvalidArgumentError: substr: pos 3 is out of range for b'' (element 1, of 0 "
            "bytes): pos must lie in [-length, length] of its string; keep it within "
            "ag::strings::length of the input");
  EXPECT_THROW_CONTAINS(ag::strings::substr(s, -6, 1), ag::InvalidArgumentError,
                        "substr: pos -6 is out of range for b'hello' (element 0, of 5 bytes)");
}

// tf.strings.substr's documented examples, with int32 and int64 positions.
TEST(StringOps, SubstrWithTensorPositionsAndLengths) {
  const Tensor words = ag::constant({{"ten", "eleven", "twelve"},
                                     {"thirteen", "fourteen", "fifteen"},
                                     {"sixteen", "seventeen", "eighteen"}});
  // One pos and len per string.
  const Tensor pos = ag::constant({{1, 2, 3}, {1, 2, 3}, {1, 2, 3}});
  const Tensor len = ag::constant({{2, 3, 4}, {4, 3, 2}, {5, 5, 5}});
  const Tensor cut = ag::strings::substr(words, pos, len);
  EXPECT_EQ(cut.shape(), (ag::Shape{3, 3}));
  EXPECT_EQ(values(cut),
            (Strings{"en", "eve", "lve", "hirt", "urt", "te", "ixtee", "vente", "hteen"}));
  // One pos and len per column, broadcast over the rows.
  const Tensor columns = ag::strings::substr(
      ag::concat({words, ag::constant({{"nineteen", "twenty", "twentyone"}})}, 0),
      ag::constant({int64_t{1}, 2, 3}), ag::constant({int64_t{1}, 2, 3}));
  EXPECT_EQ(columns.shape(), (ag::Shape{4, 3}));
  EXPECT_EQ(values(columns),
            (Strings{"e", "ev", "lve", "h", "ur", "tee", "i", "ve", "hte", "i", "en", "nty"}));
  // One string, cut at several places: the input broadcasts onto pos.
  const Tensor pieces = ag::strings::substr(ag::constant("thirteen"), ag::constant({1, 5, 7}),
                                            ag::constant({3, 2, 1}));
  EXPECT_EQ(pieces.shape(), ag::Shape{3});
  EXPECT_EQ(values(pieces), (Strings{"hir", "ee", "n"}));
  // Scalar tensors cut as the C++ integers do; negative pos and len too.
  EXPECT_EQ(values(ag::strings::substr(words[0], ag::constant(-3), ag::constant(int64_t{-1}))),
            values(ag::strings::substr(words[0], -3, -1)));
  EXPECT_EQ(
      values(ag::strings::substr(words[0], ag::constant({0, -2, 6}), ag::constant({9, 1, 0}))),
      (Strings{"ten", "e", ""}));
}

TEST(StringErrors, SubstrPositionsNameTheProblemAndTheFix) {
  const Tensor words = ag::constant({"hello", "hi"});
  EXPECT_EQ(ag_test::error_of([&] {
              ag::strings::substr(words, ag::constant({1.0f, 2.0f}), ag::constant({1, 1}));
            }),
            "InvalidArgumentError: substr: pos has unsupported dtype float32; it takes int32 or "
            "int64, as tf.strings.substr (ag::cast it)");
  EXPECT_THROW_CONTAINS(
      ag::strings::substr(words, ag::constant({1, 1}), ag::constant({true, false})),
      ag::InvalidArgumentError, "substr: len has unsupported dtype bool");
  EXPECT_EQ(
      ag_test::error_of([&] { ag::strings::substr(words, ag::constant({1, 1}), ag::constant(2)); }),
      "InvalidArgumentError: substr: pos and len must have the same shape, got (2,) and (); "
      "give one len for each pos, as tf.strings.substr does");
  EXPECT_EQ(ag_test::error_of([&] {
              ag::strings::substr(words, ag::constant({1, 1, 1}), ag::constant({2, 2, 2}));
            }),
            "InvalidArgumentError: substr: pos and len of shape (3,) do not broadcast against "
            "the input of shape (2,); give them the input's shape, a shape that broadcasts, or "
            "pass scalars");
  EXPECT_THROW_CONTAINS(ag::strings::substr(words, ag::constant({0, 3}), ag::constant({1, 1})),
                        ag::InvalidArgumentError,
                        "substr: pos 3 is out of range for b'hi' (element 1, of 2 bytes)");
  // Traced, pos and len are graph values: the same message, then the node.
  auto cut = ag::function([](const Tensor& s, const Tensor& p, const Tensor& n) {
    return ag::strings::substr(s, p, n);
  });
  const Tensor bad_pos = ag::constant({0, -3});
  const std::string eager =
      ag_test::error_of([&] { ag::strings::substr(words, bad_pos, ag::constant({1, 1})); });
  EXPECT_CONTAINS(eager, "substr: pos -3 is out of range for b'hi' (element 1, of 2 bytes)");
  EXPECT_TRUE(ag_test::error_of([&] {
                cut(words, bad_pos, ag::constant({1, 1}));
              }).starts_with(eager + "\n  in op substr"));
}

TEST(StringOps, AsStringWritesNumbersAsTensorFlowDoes) {
  EXPECT_EQ(values(ag::strings::as_string(ag::constant({1, -20}))), (Strings{"1", "-20"}));
  EXPECT_EQ(values(ag::strings::as_string(ag::constant({3.5, -0.25}))),
            (Strings{"3.500000", "-0.250000"}));
  EXPECT_EQ(values(ag::strings::as_string(ag::constant({true, false}))),
            (Strings{"true", "false"}));
  EXPECT_EQ(values(ag::strings::as_string(ag::cast(ag::constant({200}), ag::uint8))),
            (Strings{"200"}));
  EXPECT_THROW_CONTAINS(ag::strings::as_string(ag::constant("a")), ag::InvalidArgumentError,
                        "as_string: the input is a string tensor already");
}

TEST(StringOps, ToNumberParsesOrNamesTheBadValue) {
  const Tensor f = ag::strings::to_number(ag::constant({"1.5", " -2 ", "+3e2", "inf"}));
  EXPECT_EQ(f.dtype(), ag::float32);
  EXPECT_EQ(f.to_vector<float>(),
            (std::vector<float>{1.5f, -2.0f, 300.0f, std::numeric_limits<float>::infinity()}));
  const Tensor i = ag::strings::to_number(ag::constant({"7", "-9000000000"}), ag::int64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{7, -9000000000}));
  EXPECT_THROW_CONTAINS(ag::strings::to_number(ag::constant({"1", "abc"}), ag::int32),
                        ag::InvalidArgumentError,
                        "string_to_number: cannot convert b'abc' (element 1) to int32: not a "
                        "number");
  EXPECT_THROW_CONTAINS(ag::strings::to_number(ag::constant("1.5"), ag::int32),
                        ag::InvalidArgumentError, "cannot convert b'1.5' (element 0) to int32");
  EXPECT_THROW_CONTAINS(ag::strings::to_number(ag::constant("3000000000"), ag::int32),
                        ag::InvalidArgumentError, "out of its range");
  EXPECT_THROW_CONTAINS(ag::strings::to_number(ag::constant("1"), ag::uint8),
                        ag::InvalidArgumentError,
                        "out_type must be float32, float64, int32 or int64, got uint8");
}

TEST(StringOps, SplitIsDenseWithEmptyPadding) {
  const Tensor one = ag::strings::split(ag::constant("a b  c"));
  EXPECT_EQ(one.shape(), ag::Shape{3});
  EXPECT_EQ(values(one), (Strings{"a", "b", "c"}));
  const Tensor rows = ag::strings::split(ag::constant({"a,b", "c", "d,,e"}), ",");
  EXPECT_EQ(rows.shape(), (ag::Shape{3, 3}));
  EXPECT_EQ(values(rows), (Strings{"a", "b", "", "c", "", "", "d", "", "e"}));
  EXPECT_EQ(ag::strings::split(ag::constant({"", ""}), ",").shape(), (ag::Shape{2, 0}));
  EXPECT_THROW_CONTAINS(ag::strings::split(ag::constant({{"a"}})), ag::InvalidArgumentError,
                        "takes a scalar or 1-D input");
}

TEST(StringOps, ReduceJoinAlongAxes) {
  const Tensor m = ag::constant({{"a", "b"}, {"c", "d"}});
  EXPECT_EQ(values(ag::strings::reduce_join(m)), (Strings{"abcd"}));
  EXPECT_EQ(values(ag::strings::reduce_join(m, {0}, false, "+")), (Strings{"a+c", "b+d"}));
  const Tensor rows = ag::strings::reduce_join(m, {-1}, true, " ");
  EXPECT_EQ(rows.shape(), (ag::Shape{2, 1}));
  EXPECT_EQ(values(rows), (Strings{"a b", "c d"}));
}

TEST(StringOps, DataMovementMovesStrings) {
  const Tensor m = ag::constant({{"a", "b", "c"}, {"d", "e", "f"}});
  EXPECT_EQ(values(ag::transpose(m)), (Strings{"a", "d", "b", "e", "c", "f"}));
  EXPECT_EQ(values(ag::reshape(m, {3, 2})), values(m));
  EXPECT_EQ(values(ag::concat({m, m}, 0)).size(), 12u);
  EXPECT_EQ(values(ag::stack({m[0], m[1]}, 1)), (Strings{"a", "d", "b", "e", "c", "f"}));
  EXPECT_EQ(values(ag::gather(m, ag::constant({1, 0}), 1)), (Strings{"b", "a", "e", "d"}));
  EXPECT_EQ(values(m[1]), (Strings{"d", "e", "f"}));
  EXPECT_EQ(values(ag::where(ag::constant({true, false, true}), m[0], m[1])),
            (Strings{"a", "e", "c"}));
  EXPECT_EQ(values(ag::identity(m[0])), (Strings{"a", "b", "c"}));
  EXPECT_EQ(values(ag::tile(ag::constant({"x"}), {3})), (Strings{"x", "x", "x"}));
  EXPECT_EQ(values(ag::broadcast_to(ag::constant("x"), {2})), (Strings{"x", "x"}));
}

TEST(StringErrors, NumericOpsNameTheOpAndTheFix) {
  const Tensor s = ag::constant({"1", "2"});
  EXPECT_THROW_CONTAINS(s - s, ag::InvalidArgumentError,
                        "sub: string tensors are not supported: sub computes on numbers; convert "
                        "strings to numbers with ag::strings::to_number(x, dtype)");
  EXPECT_THROW_CONTAINS(ag::reduce_sum(s), ag::InvalidArgumentError, "reduce_sum: string tensors");
  EXPECT_THROW_CONTAINS(ag::cast(s, ag::float32), ag::InvalidArgumentError,
                        "cast: string tensors are not supported");
  EXPECT_THROW_CONTAINS(ag::cast(ag::constant(1), ag::string), ag::InvalidArgumentError,
                        "ag::strings::as_string(x)");
  EXPECT_THROW_CONTAINS(s < s, ag::InvalidArgumentError, "less: string tensors");
  EXPECT_THROW_CONTAINS(s + ag::constant(1), ag::InvalidArgumentError,
                        "cannot combine string and int32 tensors: strings mix with no other "
                        "dtype");
  EXPECT_THROW_CONTAINS(s + 1, ag::InvalidArgumentError,
                        "cannot combine a string tensor with a C++ number");
  EXPECT_THROW_CONTAINS(s.to_vector<float>(), ag::InvalidArgumentError,
                        "a string tensor's elements are byte strings, not numbers");
  EXPECT_THROW_CONTAINS(ag::strings::to_vector(ag::constant(1)), ag::TypeError,
                        "needs a string tensor, got int32");
  EXPECT_THROW_CONTAINS(ag::strings::length(ag::constant(1)), ag::InvalidArgumentError,
                        "string_length: the input must be a string tensor, got int32");
}

TEST(StringErrors, TracedCallsSayWhatEagerCallsSay) {
  const Tensor s = ag::constant({"1", "2"});
  auto negate = [](const Tensor& x) { return -x; };
  const std::string eager = ag_test::error_of([&] { negate(s); });
  EXPECT_CONTAINS(eager, "neg: string tensors are not supported");
  auto traced = ag::function(negate);
  EXPECT_CONTAINS(ag_test::error_of([&] { traced(s); }), "neg: string tensors are not supported");
  auto bad_number = ag::function([](const Tensor& x) { return ag::strings::to_number(x); });
  // The same message; the traced one then names the node and the function.
  const std::string eager_message =
      ag_test::error_of([&] { ag::strings::to_number(ag::constant("x1")); });
  EXPECT_EQ(eager_message,
            "InvalidArgumentError: string_to_number: cannot convert b'x1' (element 0) to float32: "
            "not a number; clean the strings first, or read them as another dtype");
  EXPECT_TRUE(ag_test::error_of([&] {
                bad_number(ag::constant("x1"));
              }).starts_with(eager_message + "\n  in op string_to_number"));
}

// The tf.function guide's `double`: a + a on "a" gives b'aa'.
TEST(StringTracing, TheGuidesDoubleOfAString) {
  auto double_ = ag::function([](const Tensor& a) { return a + a; },
                              {.input_signature = std::vector{ag::TensorSpec({}, ag::string)},
                               .name = "double",
                               .arg_names = {"a"}});
  EXPECT_EQ(double_(ag::constant("a")).to_string(), "ag::Tensor(b'aa', shape=(), dtype=string)");
  EXPECT_EQ(double_(ag::constant("b")).to_string(), "ag::Tensor(b'bb', shape=(), dtype=string)");
  EXPECT_EQ(double_.tracing_count(), 1);
  EXPECT_THROW(double_(ag::constant(1)), ag::TypeError);
}

TEST(StringTracing, EagerEqualsGraphForEveryStringOp) {
  const Tensor words = ag::constant({"7 8", "10", "x y z"});
  eager_equals_traced([](const Tensor& s) { return s + s + ag::constant("!"); }, words);
  eager_equals_traced([](const Tensor& s) { return s == ag::constant("10"); }, words);
  eager_equals_traced([](const Tensor& s) { return ag::strings::length(s); }, words);
  eager_equals_traced([](const Tensor& s) { return ag::strings::substr(s, 0, 2); }, words);
  eager_equals_traced([](const Tensor& s) { return ag::strings::substr(s, -2, -1); }, words);
  eager_equals_traced([](const Tensor& s) { return ag::strings::split(s); }, words);
  eager_equals_traced([](const Tensor& s) { return ag::strings::reduce_join(s, {}, false, "|"); },
                      words);
  eager_equals_traced([](const Tensor& s) { return ag::strings::to_number(s, ag::int32) * 2; },
                      ag::constant({"7", "-8", " 10 "}));
  eager_equals_traced([](const Tensor& x) { return ag::strings::as_string(x) + ag::constant("%"); },
                      ag::constant({0.5, 2.0}));
  eager_equals_traced(
      [](const Tensor& s) {
        return ag::where(ag::strings::length(s) > 2, s, ag::transpose(ag::stack({s}))[0]);
      },
      words);
}

// pos and len as graph values: arguments, values computed in the graph, and
// shapes known only when the graph runs.
TEST(StringTracing, SubstrWithGraphPositionsEqualsEager) {
  const Tensor grid = ag::constant({{"abcdef", "xyz"}, {"0123", "uvwxyz"}});
  auto by_tensors = [](const Tensor& s, const Tensor& p, const Tensor& n) {
    return ag::strings::substr(s, p, n);
  };
  const Tensor pos32 = ag::constant({{1, -2}, {0, 3}});
  const Tensor len32 = ag::constant({{2, 5}, {-1, 2}});
  EXPECT_EQ(values(eager_equals_traced(by_tensors, grid, pos32, len32)),
            (Strings{"bc", "yz", "0123", "xy"}));
  eager_equals_traced(by_tensors, grid, ag::cast(pos32[1], ag::int64),
                      ag::cast(len32[0], ag::int64));
  eager_equals_traced(by_tensors, ag::constant("autograph"), ag::constant({0, 4, -5}),
                      ag::constant({4, 5, 2}));
  // Positions computed from the strings themselves: the last two bytes.
  const Tensor last_two = eager_equals_traced(
      [](const Tensor& s) {
        const Tensor from = ag::strings::length(s) - 2;
        return ag::strings::substr(s, from, ag::zeros_like(from) + 2);
      },
      grid);
  EXPECT_EQ(values(last_two), (Strings{"ef", "yz", "23", "yz"}));
  auto unknown = ag::function(
      by_tensors, {.input_signature = std::vector{ag::TensorSpec({ag::kUnknownDim}, ag::string),
                                                  ag::TensorSpec({ag::kUnknownDim}, ag::int32),
                                                  ag::TensorSpec({ag::kUnknownDim}, ag::int32)}});
  const Tensor words = ag::constant({"hello", "world", "!"});
  EXPECT_EQ(values(unknown(words, ag::constant({1, -3, 0}), ag::constant({3, 2, 4}))),
            (Strings{"ell", "rl", "!"}));
  EXPECT_EQ(values(unknown(words, ag::constant({1}), ag::constant({9}))),
            (Strings{"ello", "orld", ""}));
  EXPECT_CONTAINS(
      ag_test::error_of([&] { unknown(words, ag::constant({1, 2}), ag::constant({1})); }),
      "substr: pos and len must have the same shape, got (2,) and (1,)");
}

TEST(StringTracing, ConstantFoldingOfCapturedStrings) {
  const Tensor captured = ag::constant({"a", "b"});
  auto f =
      ag::function([&] { return ag::strings::reduce_join(captured + captured, {}, false, ","); });
  EXPECT_EQ(values(f()), (Strings{"aa,bb"}));
  EXPECT_EQ(values(f()), (Strings{"aa,bb"}));
}

TEST(StringTracing, StringsThroughAStagedLoop) {
  auto repeat = [](const Tensor& s, const Tensor& n) {
    auto [r, k] = ag::while_loop(
        [&](const Tensor&, const Tensor& j) { return j < n; },
        [&](const Tensor& acc, const Tensor& j) { return std::make_tuple(acc + s, j + 1); },
        std::make_tuple(ag::constant(""), ag::constant(0)));
    (void)k;
    return r;
  };
  const Tensor eager = eager_equals_traced(repeat, ag::constant("ab"), ag::constant(3));
  EXPECT_EQ(ag::strings::item(eager), "ababab");
}

TEST(StringTracing, GraphTextPrintsAndParsesStringConstants) {
  auto f = ag::function([](const Tensor& s) { return s + ag::constant({"q\"x", "y"}); });
  auto concrete = f.get_concrete_function(ag::TensorSpec({2}, ag::string));
  const std::string text = ag::graph::to_text(concrete.graph().body());
  EXPECT_CONTAINS(text, "[\"q\\\"x\", \"y\"]");
  EXPECT_EQ(ag::graph::to_text(ag::graph::parse_text(text)), text);
}

TEST(StringCheckpoints, StringVariablesAreAClearError) {
  ag::Variable v(ag::constant({"a"}));
  ag::train::Checkpoint checkpoint;
  checkpoint.track("v", v);
  EXPECT_THROW_CONTAINS(checkpoint.write(testing::TempDir() + "/strings.ckpt"),
                        ag::UnimplementedError, "is a string tensor, which checkpoints do not");
}

}  // namespace
