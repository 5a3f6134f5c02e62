// The text form of graph bodies (graph/graph_text.h): what it prints for a
// traced function, print -> parse -> print over traced and optimised bodies
// (If, While, constants, variables, effects, fused nodes), and the errors
// of text that is not a body.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "graph/graph.h"
#include "graph/graph_text.h"
#include "graph/variable_state.h"
#include "staged_test_util.h"

namespace {

using ag::Tensor;
using ag::TensorSpec;
using ag::graph::Body;
using ag::graph::Node;
using ag::graph::NodeKind;

Tensor mean_squared_error(Tensor a, Tensor b) {
  return ag::reduce_mean(ag::pow(a - b, 2));
}

TEST(GraphText, PrintsATracedFunctionOneNodePerLine) {
  auto mse = ag::function(mean_squared_error, {.name = "mse", .arg_names = {"a", "b"}});
  auto concrete =
      mse.get_concrete_function(TensorSpec({1000}, ag::float32), TensorSpec({1000}, ag::float32));
  EXPECT_EQ(ag::graph::to_text(concrete.graph().body()),
            "a = Placeholder : float32[1000]\n"
            "b = Placeholder : float32[1000]\n"
            "sub = sub(a, b) : float32[1000]\n"
            "mul = mul(sub, sub) : float32[1000]\n"
            "reduce_mean = reduce_mean(mul) : float32[]\n"
            "Identity = Identity(reduce_mean) : float32[]\n"
            "inputs (a, b)\n"
            "outputs (Identity)\n");
  EXPECT_EQ(ag::graph::to_text(concrete.optimized_graph().body()),
            "a = Placeholder : float32[1000]\n"
            "b = Placeholder : float32[1000]\n"
            "fused = Fused(a, b) : float32[] {\n"
            "  members {\n"
            "    a = Placeholder : float32[1000]\n"
            "    b = Placeholder : float32[1000]\n"
            "    sub = sub(a, b) : float32[1000]\n"
            "    mul = mul(sub, sub) : float32[1000]\n"
            "    reduce_mean = reduce_mean(mul) : float32[]\n"
            "    inputs (a, b)\n"
            "    outputs (reduce_mean)\n"
            "  }\n"
            "}\n"
            "Identity = Identity(fused) : float32[]\n"
            "inputs (a, b)\n"
            "outputs (Identity)\n");
}

// `a` and `b` are the same body: every field the IR has but sites, the
// recording function, variables' values and effects' functions.
void expect_same_body(const Body& a, const Body& b, const std::string& where) {
  ASSERT_EQ(a.nodes.size(), b.nodes.size()) << where;
  EXPECT_EQ(a.placeholders, b.placeholders) << where;
  EXPECT_EQ(a.outputs, b.outputs) << where;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const Node& x = a.nodes[i];
    const Node& y = b.nodes[i];
    const std::string at = where + "/" + x.name;
    EXPECT_EQ(x.kind, y.kind) << at;
    EXPECT_EQ(x.op, y.op) << at;
    EXPECT_EQ(x.name, y.name) << at;
    EXPECT_TRUE(std::equal(x.inputs.begin(), x.inputs.end(), y.inputs.begin(), y.inputs.end()))
        << at;
    ASSERT_EQ(x.outputs.size(), y.outputs.size()) << at;
    for (size_t k = 0; k < x.outputs.size(); ++k) {
      EXPECT_EQ(x.outputs[k].dtype, y.outputs[k].dtype) << at;
      EXPECT_EQ(x.outputs[k].shape, y.outputs[k].shape) << at;
    }
    EXPECT_EQ(x.attrs, y.attrs) << at;
    ASSERT_EQ(x.value.defined(), y.value.defined()) << at;
    if (x.value.defined()) ag_test::expect_same_bits(x.value, y.value, at);
    ASSERT_EQ(x.variable == nullptr, y.variable == nullptr) << at;
    if (x.variable) {
      EXPECT_EQ(x.variable->id, y.variable->id) << at;
      EXPECT_EQ(x.variable->name, y.variable->name) << at;
    }
    EXPECT_EQ(x.effect == nullptr, y.effect == nullptr) << at;
    ASSERT_EQ(x.subgraphs.size(), y.subgraphs.size()) << at;
    for (size_t k = 0; k < x.subgraphs.size(); ++k)
      expect_same_body(*x.subgraphs[k], *y.subgraphs[k], at + "/" + std::to_string(k));
  }
}

// print -> parse -> print gives the text back, and the parsed body is `body`.
void expect_round_trip(const Body& body, const std::string& what) {
  const std::string text = ag::graph::to_text(body);
  const Body parsed = ag::graph::parse_text(text);
  EXPECT_EQ(ag::graph::to_text(parsed), text) << what;
  EXPECT_EQ(parsed.to_string(), body.to_string()) << what;
  expect_same_body(body, parsed, what);
}

template <class F, class... Args>
void expect_round_trips(const std::string& what, const F& fn, const Args&... args) {
  auto concrete = fn.get_concrete_function(args...);
  expect_round_trip(concrete.graph().body(), what + ", traced");
  expect_round_trip(concrete.optimized_graph().body(), what + ", optimised");
}

TEST(GraphText, RoundTripsTheGuidesStagedFunctions) {
  expect_round_trips("mse", ag::function(mean_squared_error), TensorSpec({1000}, ag::float32),
                     TensorSpec({1000}, ag::float32));
  expect_round_trips("dynamic_rnn", ag::function(ag_test::dynamic_rnn),
                     ag::random_uniform({2, 3, 4}, -1.0, 1.0, ag::float32, 3),
                     ag::zeros({2, 4}, ag::float32));
  expect_round_trips("fizzbuzz", ag::function(ag_test::fizzbuzz_count), ag::constant(15));
  expect_round_trips("collatz", ag::function(ag_workloads::collatz_steps),
                     TensorSpec({ag::kUnknownDim}, ag::int32));
  expect_round_trips("tanh_loop", ag::function(ag_workloads::tanh_loop),
                     TensorSpec({3}, ag::float64));
  Tensor x = ag::random_uniform({4, 6, 8}, -1.0, 1.0, ag::float32, 5);
  expect_round_trips("recurrence", ag::function([](Tensor x, Tensor init) {
                       return ag_test::recurrence(x, init, {.transposed = true, .multiply = true});
                     }),
                     x, ag::ones({4, 8}, ag::float32));
}

TEST(GraphText, RoundTripsVariablesEffectsAttrsAndUnknownRanks) {
  ag::Variable v(ag::constant({1.0f, 2.0f}));
  auto update = ag::function([&](Tensor x, Tensor u) {
    ag::print(x);
    v.assign_add(x);
    Tensor noise = ag::random_uniform({2}, -0.5, 0.25, ag::float32, 7);
    Tensor s = ag::reshape(ag::cast(u, ag::float32), {1, 1});
    return v.read() * 2.5f + noise + ag::reduce_sum(ag::transpose(s, {1, 0}), {0}, true);
  });
  auto concrete = update.get_concrete_function(TensorSpec({2}, ag::float32),
                                               TensorSpec(ag::Shape::unknown_rank(), ag::int64));
  expect_round_trip(concrete.graph().body(), "update, traced");
  expect_round_trip(concrete.optimized_graph().body(), "update, optimised");
  const std::string text = ag::graph::to_text(concrete.graph().body());
  EXPECT_NE(text.find("print = Effect(args_0) : ()\n"), std::string::npos) << text;
  EXPECT_NE(text.find("{ints=[2], lo=-0.5, hi=0.25, seed=7}"), std::string::npos) << text;
  EXPECT_NE(text.find("int64[*]"), std::string::npos) << text;
}

TEST(GraphText, ParsesEachFieldOfANode) {
  const Body body = ag::graph::parse_text(R"(
    // Comments and blank lines separate tokens only.
    "my x" = Placeholder : float32[?, 3]
    c = Const [1.5, -0, inf] : float32[3]
    flags = Const [true, false] : bool[2]
    none = Const undefined : int32[]
    sum = reduce_sum("my x") {ints=[0], keepdims=true} : float32[1, 3]
    r = ReadVariableOp variable{id=7, name="w", type=float32[3], trainable=false} : float32[3]
    w = AssignVariableOp(c) variable{id=7, name="w", type=float32[3], trainable=false} : float32[3]
    log = Effect(sum) : ()
    inputs ("my x")
    outputs (sum, w)
  )");
  ASSERT_EQ(body.nodes.size(), 8u);
  EXPECT_EQ(body.nodes[0].name, "my x");
  EXPECT_EQ(body.nodes[0].outputs[0].shape, ag::Shape({ag::kUnknownDim, 3}));
  EXPECT_EQ(body.nodes[1].value.to_vector<float>()[0], 1.5f);
  EXPECT_TRUE(std::signbit(body.nodes[1].value.to_vector<float>()[1]));
  EXPECT_TRUE(std::isinf(body.nodes[1].value.to_vector<float>()[2]));
  EXPECT_EQ(body.nodes[2].value.to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_FALSE(body.nodes[3].value.defined());
  EXPECT_TRUE(body.nodes[4].is_op(ag::ops::OpId::ReduceSum));
  EXPECT_EQ(body.nodes[4].attrs.ints, std::vector<int64_t>{0});
  EXPECT_TRUE(body.nodes[4].attrs.keepdims);
  ASSERT_NE(body.nodes[5].variable, nullptr);
  EXPECT_EQ(body.nodes[5].variable, body.nodes[6].variable);  // one state per id
  EXPECT_EQ(body.nodes[5].variable->name, "w");
  EXPECT_FALSE(body.nodes[5].variable->trainable);
  EXPECT_EQ(body.nodes[7].kind, NodeKind::Effect);
  EXPECT_EQ(body.placeholders, std::vector<int32_t>{0});
  EXPECT_EQ(body.outputs.size(), 2u);
  EXPECT_EQ(body.outputs[1].node, 6);
}

TEST(GraphText, ParsedNamesContinueUniqueNaming) {
  Body body = ag::graph::parse_text(
      "x = Placeholder : int32[]\n"
      "add = add(x, x) : int32[]\n"
      "add_1 = add(add, x) : int32[]\n"
      "inputs (x)\n"
      "outputs (add_1)\n");
  EXPECT_EQ(body.unique_name("add"), "add_2");
  EXPECT_EQ(body.unique_name("x"), "x_1");
  EXPECT_EQ(body.unique_name("mul"), "mul");
}

TEST(GraphText, ParsedEffectsSayTheyCannotRun) {
  const Body body = ag::graph::parse_text("print = Effect : ()\ninputs ()\noutputs ()\n");
  ASSERT_NE(body.nodes[0].effect, nullptr);
  try {
    (*body.nodes[0].effect)({});
    FAIL() << "a parsed effect ran";
  } catch (const ag::UnimplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("effect 'print' was parsed from graph text"),
              std::string::npos)
        << e.what();
  }
}

TEST(GraphText, ElidesLargeConstantsOnlyWhenAsked) {
  const std::string whole =
      "c = Const [1, 2, 3, 4, 5] : int32[5]\n"
      "inputs ()\n"
      "outputs (c)\n";
  const Body body = ag::graph::parse_text(whole);
  EXPECT_EQ(ag::graph::to_text(body), whole);
  const std::string elided = ag::graph::to_text(body, {.max_constant_elements = 2});
  EXPECT_EQ(elided,
            "c = Const [1, 2, ...(5 elements)] : int32[5]\n"
            "inputs ()\n"
            "outputs (c)\n");
  try {
    ag::graph::parse_text(elided);
    FAIL() << "parsed an elided constant";
  } catch (const ag::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("graph text:1:18: this constant's elements were elided"),
              std::string::npos)
        << e.what();
  }
}

// The message of parsing `text`, which must fail.
std::string parse_error(const std::string& text) {
  try {
    ag::graph::parse_text(text);
  } catch (const ag::InvalidArgumentError& e) {
    return e.message();
  }
  ADD_FAILURE() << "parsed: " << text;
  return "";
}

TEST(GraphText, ErrorsSayWhereAndWhatWasExpected) {
  EXPECT_EQ(parse_error("x = Placeholder : float32[2]\n"
                        "y = neg(x] : float32[2]\n"),
            "graph text:2:10: expected ',' or ')' after an input of the node, got ']'\n"
            "  y = neg(x] : float32[2]\n"
            "           ^");
  EXPECT_EQ(parse_error("y = neg(x) : float32[2]\n"),
            "graph text:1:9: no node named 'x' is defined before this point in its body (a node "
            "reads earlier nodes of its own body only)\n"
            "  y = neg(x) : float32[2]\n"
            "          ^");
  EXPECT_NE(
      parse_error("x = negate : float32[]").find("graph text:1:5: 'negate' is neither a node kind"),
      std::string::npos);
  EXPECT_NE(
      parse_error("x = Placeholder : float23[]")
          .find("graph text:1:19: expected a dtype (float32, float64, int32, int64 or bool), got "
                "'float23'"),
      std::string::npos);
  EXPECT_NE(parse_error("x = Placeholder : float32[]\nx = Placeholder : float32[]")
                .find("graph text:2:1: a node named 'x' is defined already in this body"),
            std::string::npos);
  EXPECT_NE(parse_error("c = Const [1, 2] : int32[3]")
                .find("graph text:1:11: a constant of shape (3,) has 3 elements; the text lists 2"),
            std::string::npos);
  EXPECT_NE(parse_error("x = Placeholder : int32[]\ny = neg(x:1) : int32[]")
                .find("graph text:2:11: 'x' has 1 outputs; there is no output 1"),
            std::string::npos);
  EXPECT_NE(parse_error("p = Placeholder : bool[]\n"
                        "i = If(p) : () {\n"
                        "  then {\n"
                        "    inputs ()\n")
                .find("graph text:5:1: expected '}' closing the body opened at 3:8, got the end "
                      "of the text"),
            std::string::npos);
  EXPECT_NE(parse_error("p = Placeholder : bool[]\ni = If(p) : () {\n  body {\n  }\n}\n")
                .find("graph text:3:3: expected 'then' (subgraph 0 of If 'i') or '}', got 'body'"),
            std::string::npos);
  EXPECT_NE(parse_error("t = transpose {perm=[1, 0]} : float32[]")
                .find("graph text:1:16: unknown attribute 'perm'"),
            std::string::npos);
  EXPECT_NE(parse_error("x = Placeholder : float32[] ;")
                .find("graph text:1:29: unexpected "
                      "character ';'"),
            std::string::npos);
}

}  // namespace
