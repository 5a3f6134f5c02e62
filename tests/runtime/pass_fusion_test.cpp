// Elementwise fusion (passes/fusion.cpp) on small hand-built bodies, checked
// LLVM-style by the IR listing (Body::to_string()) before and after the pass;
// then the fused kernel (exec/plan_fused.cpp) against eager execution:
// bit-identical for elementwise results and integer reductions, within the
// reassociation bound for floating-point reductions.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ag/ag.h"
#include "body_builder.h"
#include "exec/plan.h"
#include "exec/plan_internal.h"
#include "graph/graph.h"
#include "passes/passes.h"
#include "plan_test_util.h"

namespace ag::passes {
namespace {

using namespace ag_test;

Attrs axes(std::vector<int64_t> a) {
  Attrs attrs;
  attrs.ints = std::move(a);
  return attrs;
}

TEST(Fusion, ChainWithTrailingReductionBecomesOneNode) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {1000});
  ValueRef y = b.placeholder("y", float32, {1000});
  ValueRef d = b.op(OpId::Sub, {x, y});
  b.output(b.op(OpId::ReduceMean, {b.op(OpId::Mul, {d, d})}));
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> y\n"
            "['x', 'y'] -> sub\n"
            "['sub', 'sub'] -> mul\n"
            "['mul'] -> reduce_mean\n"
            "['reduce_mean'] -> Identity\n");

  fuse_elementwise(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> y\n"
            "['x', 'y'] -> fused {sub, mul, reduce_mean}\n"
            "['fused'] -> Identity\n");
  const Node& fused = b.body.nodes[2];
  ASSERT_EQ(fused.kind, NodeKind::Fused);
  EXPECT_EQ(fused.op_name(), "Fused");
  EXPECT_EQ(fused.outputs[0].shape, Shape{});
  EXPECT_EQ(fused.subgraphs[0]->to_string(),
            "[] -> x\n"
            "[] -> y\n"
            "['x', 'y'] -> sub\n"
            "['sub', 'sub'] -> mul\n"
            "['mul'] -> reduce_mean\n");
  const std::string dot = b.body.to_dot("mse");
  EXPECT_NE(dot.find("[label=\"fused\\nFused\\nsub, mul, reduce_mean\", shape=box]"),
            std::string::npos)
      << dot;
}

// The TensorFlow guide's collatz step: a DAG over x, with scalar constants broadcast.
TEST(Fusion, DagWithBroadcastScalarsFusesWhole) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", int32, {8});
  ValueRef two = b.constant(constant(2));
  ValueRef even = b.op(OpId::Equal, {b.op(OpId::Mod, {x, two}), b.constant(constant(0))});
  ValueRef half = b.op(OpId::FloorDiv, {x, two});
  ValueRef triple =
      b.op(OpId::Add, {b.op(OpId::Mul, {b.constant(constant(3)), x}), b.constant(constant(1))});
  b.output(b.op(OpId::Where, {even, half, triple}));

  fuse_elementwise(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> Const\n"
            "[] -> Const_1\n"
            "[] -> Const_2\n"
            "[] -> Const_3\n"
            "['x', 'Const', 'Const_1', 'Const_2', 'Const_3'] -> fused "
            "{mod, equal, floordiv, mul, add, where}\n"
            "['fused'] -> Identity\n");
}

TEST(Fusion, ValuesUsedOutsideTheGroupStayOutside) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {2, 3});
  ValueRef sum = b.op(OpId::Add, {x, x});
  ValueRef rows = b.op(OpId::ReduceSum, {sum}, axes({1}));  // not over all axes
  b.output(rows);
  b.output(b.op(OpId::Exp, {b.op(OpId::Neg, {sum})}));

  fuse_elementwise(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "['x', 'x'] -> add\n"
            "['add'] -> reduce_sum\n"
            "['reduce_sum'] -> Identity\n"
            "['add'] -> fused {neg, exp}\n"
            "['fused'] -> Identity_1\n");
}

TEST(Fusion, OtherBroadcastsScalarsAndStatefulOpsStayOutside) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {2, 3});
  ValueRef bias = b.placeholder("bias", float32, {3});
  ValueRef noise = b.op(OpId::RandomUniform, {}, shape_attrs({2, 3}));
  ValueRef biased = b.op(OpId::Add, {b.op(OpId::Mul, {x, noise}), bias});
  b.output(b.op(OpId::Tanh, {b.op(OpId::Sigmoid, {biased})}));
  ValueRef s = b.placeholder("s", float32, {});
  b.output(b.op(OpId::Neg, {b.op(OpId::Exp, {s})}));
  const std::string before = b.body.to_string();

  fuse_elementwise(b.body);

  // add reads bias [3], which is neither [2, 3] nor one element; the
  // scalars are left to the scalar steps.
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> bias\n"
            "[] -> random_uniform\n"
            "['x', 'random_uniform'] -> mul\n"
            "['mul', 'bias'] -> add\n"
            "['add'] -> fused {sigmoid, tanh}\n"
            "['fused'] -> Identity\n"
            "[] -> s\n"
            "['s'] -> exp\n"
            "['exp'] -> neg\n"
            "['neg'] -> Identity_1\n")
      << before;
}

// A value that is an output and is also reduced over all axes (a loop
// body's new value and the maximum its condition reads): the fused node
// computes both. Not for a float sum (fused, it adds in another order), nor
// over a vector short enough for flat steps.
TEST(Fusion, AReductionOfTheRootIsASecondOutput) {
  auto fused = [](DType dtype, Shape shape, OpId reduction) {
    BodyBuilder b;
    ValueRef x = b.placeholder("x", dtype, std::move(shape));
    ValueRef y = b.op(OpId::Add, {b.op(OpId::Mul, {x, x}), x});
    b.output(y);
    b.output(b.op(reduction, {y}));
    fuse_elementwise(b.body);
    return b.body.to_string();
  };
  EXPECT_EQ(fused(int32, {1000}, OpId::ReduceMax),
            "[] -> x\n"
            "['x'] -> fused {mul, add, reduce_max}\n"
            "['fused'] -> Identity\n"
            "['fused:1'] -> Identity_1\n");
  EXPECT_EQ(fused(float32, {1000}, OpId::ReduceMin),
            "[] -> x\n"
            "['x'] -> fused {mul, add, reduce_min}\n"
            "['fused'] -> Identity\n"
            "['fused:1'] -> Identity_1\n");
  EXPECT_EQ(fused(float32, {1000}, OpId::ReduceSum),
            "[] -> x\n"
            "['x'] -> fused {mul, add}\n"
            "['fused'] -> Identity\n"
            "['fused'] -> reduce_sum\n"
            "['reduce_sum'] -> Identity_1\n");
  EXPECT_EQ(fused(int32, {16}, OpId::ReduceMax),
            "[] -> x\n"
            "['x'] -> fused {mul, add}\n"
            "['fused'] -> Identity\n"
            "['fused'] -> reduce_max\n"
            "['reduce_max'] -> Identity_1\n");
}

TEST(Fusion, SingleOpsAndOutputsAreNotFused) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {4});
  ValueRef e = b.op(OpId::Exp, {x});
  b.output(e);
  b.output(b.op(OpId::Neg, {e}));
  const std::string before = b.body.to_string();

  fuse_elementwise(b.body);

  EXPECT_EQ(b.body.to_string(), before);
}

// ---- The fused kernel, eager against graph -------------------------------------

template <class F, class... Args>
void expect_identical(const std::string& what, F f, const Args&... args) {
  auto fn = ag::function(f, {.name = what});
  Tensor graph = fn(args...);
  Tensor eager = f(args...);
  ASSERT_EQ(graph.dtype(), eager.dtype()) << what;
  ASSERT_EQ(graph.shape(), eager.shape()) << what;
  EXPECT_EQ(std::memcmp(graph.raw_data(), eager.raw_data(),
                        size_t(eager.num_elements()) * dtype_size(eager.dtype())),
            0)
      << what;
}

Tensor collatz_step(Tensor x) {
  Tensor next = ag::where(x % 2 == 0, ag::floordiv(x, 2), 3 * x + 1);
  return ag::where(x > 1, next, x);
}

// 5000 elements: four whole blocks and a partial one.
TEST(FusedKernel, IntegerChainsAreBitIdentical) {
  Tensor x = ag::range(ag::constant(1), ag::constant(5001));
  expect_identical("collatz_step", [](Tensor t) { return collatz_step(t); }, x);
  expect_identical("int_sum", [](Tensor t) { return ag::reduce_sum(t * t - 7); }, x);
  expect_identical("int_mean", [](Tensor t) { return ag::reduce_mean(t * 3 % 11 - 5); }, x);
  expect_identical("int_max", [](Tensor t) { return ag::reduce_max(-(t % 97)); }, x);
  expect_identical("int_any", [](Tensor t) { return ag::reduce_any(t % 4999 == 0); }, x);
  expect_identical("cast_chain", [](Tensor t) { return ag::cast(t * 2, ag::float32) + 0.5f; }, x);
}

TEST(FusedKernel, FloatElementwiseChainsAreBitIdentical) {
  Tensor x = ag::random_uniform({3000}, -2.0, 2.0, ag::float32, 11);
  Tensor y = ag::random_uniform({3000}, -2.0, 2.0, ag::float32, 12);
  expect_identical(
      "float_chain", [](Tensor a, Tensor b) { return ag::tanh(a * 0.5f + b) / (b * b + 1.0f); }, x,
      y);
  expect_identical(
      "clip_chain", [](Tensor a, Tensor b) { return ag::clip_by_value(a - b, -1.0f, 1.0f) * 2.0f; },
      x, y);
}

// A sum of n float32 values computed in two orders differs by at most
// (k1 + k2) u sum|x_i|, with u = 2^-24 and k the longest chain of additions
// of each order: eager adds n/8 elements per lane plus 8 lanes; the fused
// kernel, per block of B, B/L elements per lane, then fewer than 2L
// additions for the lanes (pairwise) and the tail, then (n/B)/8 + 8 partial
// results. MSE streams: B is kStreamBlockElements.
TEST(FusedKernel, FloatReductionsStayWithinTheReassociationBound) {
  const int64_t n = 100000;
  Tensor a = ag::random_uniform({n}, -1.0, 1.0, ag::float32, 21);
  Tensor b = ag::random_uniform({n}, -1.0, 1.0, ag::float32, 22);
  auto mse = [](Tensor p, Tensor q) { return ag::reduce_mean(ag::pow(p - q, 2)); };
  auto fn = ag::function(mse, {.name = "mse"});
  const float graph = fn(a, b).item<float>();
  const float eager = mse(a, b).item<float>();
  const double k_eager = double(n) / 8 + 8;
  const double block = double(exec::kStreamBlockElements), lanes = double(exec::kFusedSumLanes);
  const double k_fused = block / lanes + 2 * lanes + double(n) / block / 8 + 8;
  const double sum_abs = double(eager) * double(n);  // squares are non-negative
  const double bound = (k_eager + k_fused) * std::ldexp(1.0, -24) * sum_abs / double(n);
  EXPECT_LE(std::abs(double(graph) - double(eager)), bound);
  EXPECT_NEAR(graph, 2.0 / 3.0, 0.01);  // E[(p - q)^2] for p, q uniform on [-1, 1]
}

// The benchmark's collatz step over an int32 placeholder x of `shape`, as
// b's output: where(x > 1, where(x % 2 == 0, x // 2, 3 * x + 1), x).
void add_collatz_step(BodyBuilder& b, Shape shape) {
  ValueRef x = b.placeholder("x", int32, std::move(shape));
  ValueRef two = b.constant(constant(2));
  ValueRef even = b.op(OpId::Equal, {b.op(OpId::Mod, {x, two}), b.constant(constant(0))});
  ValueRef next = b.op(
      OpId::Where,
      {even, b.op(OpId::FloorDiv, {x, two}),
       b.op(OpId::Add, {b.op(OpId::Mul, {b.constant(constant(3)), x}), b.constant(constant(1))})});
  b.output(b.op(OpId::Where, {b.op(OpId::Greater, {x, b.constant(constant(1))}), next, x}));
}

// One form of the guarded step where(guard, where(test, x // s, addend), x)
// (guarded_division_step in exec/plan_fused.cpp); the defaults are
// collatz's where(x > g, where(x % s == r, x // s, x * t + e), x).
struct GuardedForm {
  OpId guard = OpId::Greater;
  bool scalar_left = false;       // g guard x
  bool step_on_else = false;      // where(guard, x, step)
  OpId test = OpId::Equal;        // or NotEqual
  bool quotient_on_else = false;  // where(test, addend, x // s)
  OpId addend = OpId::Add;        // or Sub
  bool product_left = true;       // x * t before e
  bool quotient_first = true;     // floordiv before mod
};

// Variants of the body: the last three keep it from being a guarded step.
enum class GuardedVariant {
  kPlain,
  kComputedVector,  // x + x stepped (a member of the program, not an input)
  kKeptBranch,      // where(guard, step, y), y another vector (placeholder 6)
  kTensorDivisor,   // s of n elements
  kProductOutput,   // x * t also an output
};

// b's output: the form over placeholders x (`n` elements) and scalars g,
// s, r, t and e, in that order.
void add_guarded_step(BodyBuilder& b, const GuardedForm& f, DType dtype, int64_t n,
                      GuardedVariant variant = GuardedVariant::kPlain) {
  ValueRef x = b.placeholder("x", dtype, {n});
  ValueRef g = b.placeholder("g", dtype, {});
  ValueRef s =
      b.placeholder("s", dtype, variant == GuardedVariant::kTensorDivisor ? Shape{n} : Shape{});
  ValueRef r = b.placeholder("r", dtype, {});
  ValueRef t = b.placeholder("t", dtype, {});
  ValueRef e = b.placeholder("e", dtype, {});
  if (variant == GuardedVariant::kComputedVector) x = b.op(OpId::Add, {x, x});
  ValueRef quotient, remainder;
  if (f.quotient_first) quotient = b.op(OpId::FloorDiv, {x, s});
  remainder = b.op(OpId::Mod, {x, s});
  if (!f.quotient_first) quotient = b.op(OpId::FloorDiv, {x, s});
  ValueRef product = b.op(OpId::Mul, {t, x});
  ValueRef addend =
      b.op(f.addend, f.product_left ? std::vector{product, e} : std::vector{e, product});
  ValueRef test = b.op(f.test, {remainder, r});
  ValueRef step = b.op(OpId::Where, f.quotient_on_else ? std::vector{test, addend, quotient}
                                                       : std::vector{test, quotient, addend});
  ValueRef guard = b.op(f.guard, f.scalar_left ? std::vector{g, x} : std::vector{x, g});
  ValueRef kept = variant == GuardedVariant::kKeptBranch ? b.placeholder("y", dtype, {n}) : x;
  b.output(b.op(OpId::Where,
                f.step_on_else ? std::vector{guard, kept, step} : std::vector{guard, step, kept}));
  if (variant == GuardedVariant::kProductOutput) b.output(product);
}

// The compiled program of a Fused node of `body` (its inputs in slots 0, 1, ...).
std::unique_ptr<exec::FusedProgram> compile_fused_node(const Body& body, const Node& node) {
  std::vector<const ops::ValueType*> types;
  for (ValueRef in : node.inputs) types.push_back(&body.type_of(in));
  std::vector<int32_t> slots(types.size());
  std::iota(slots.begin(), slots.end(), 0);
  return exec::compile_fused(node, types, slots);
}

// The compiled program of the first Fused node of b's body once optimised.
std::unique_ptr<exec::FusedProgram> fused_program_of(BodyBuilder& b) {
  optimize(b.body);
  for (const Node& node : b.body.nodes) {
    if (node.kind == NodeKind::Fused) return compile_fused_node(b.body, node);
  }
  return nullptr;
}

// A program without scratch blocks or broadcast operands (each stage reads
// the node's inputs and writes the output or a partial sum) streams in
// blocks of kStreamBlockElements; others keep L1-sized blocks. Streamed
// values against eager over two whole blocks and a partial one.
TEST(FusedKernel, ProgramsWithoutScratchBlocksStream) {
  const int64_t n = 2 * exec::kStreamBlockElements + 1234;
  auto program_of = [n](auto build) {
    BodyBuilder b;
    ValueRef x = b.placeholder("x", float32, {n});
    ValueRef y = b.placeholder("y", float32, {n});
    b.output(build(b, x, y));
    return fused_program_of(b);
  };
  auto squared_sum = program_of([](BodyBuilder& b, ValueRef x, ValueRef y) {
    ValueRef d = b.op(OpId::Sub, {x, y});
    return b.op(OpId::ReduceSum, {b.op(OpId::Mul, {d, d})}, axes({}));
  });
  EXPECT_EQ(squared_sum->num_blocks, 0u);
  EXPECT_EQ(squared_sum->block_elements, exec::kStreamBlockElements);
  auto with_scratch = program_of([](BodyBuilder& b, ValueRef x, ValueRef y) {
    return b.op(OpId::Mul, {b.op(OpId::Tanh, {b.op(OpId::Sub, {x, y})}), y});
  });
  EXPECT_GT(with_scratch->num_blocks, 0u);
  EXPECT_EQ(with_scratch->block_elements, exec::kBlockElements);
  auto with_broadcast = program_of([](BodyBuilder& b, ValueRef x, ValueRef y) {
    return b.op(OpId::Mul, {b.op(OpId::Sub, {x, y}), b.constant(constant(3.0f))});
  });
  EXPECT_EQ(with_broadcast->broadcasts.size(), 1u);
  EXPECT_EQ(with_broadcast->block_elements, exec::kBlockElements);

  Tensor x = ag::random_uniform({n}, -2.0, 2.0, ag::float32, 31);
  Tensor y = ag::random_uniform({n}, -2.0, 2.0, ag::float32, 32);
  expect_identical("streamed_pair", [](Tensor a, Tensor c) { return (a - c) * (a - c); }, x, y);
  expect_identical(
      "streamed_int_pair", [](Tensor a, Tensor c) { return (a + c) * a; },
      ag::cast(x * 1000.0f, int32), ag::cast(y * 1000.0f, int32));
}

// The number of stages that run two members in one loop.
size_t composed_stages(const exec::FusedProgram& program) {
  size_t n = 0;
  for (const exec::FusedProgram::Stage& s : program.stages) n += s.composed != nullptr;
  return n;
}

// An add/sub/mul read only by an add/sub/mul of its dtype, summed or not,
// runs in its reader's loop; other pairs run member by member.
TEST(FusedKernel, ArithmeticPairsCompose) {
  auto chain = [](DType dtype, OpId first, OpId second, bool sum, bool square) {
    BodyBuilder b;
    ValueRef x = b.placeholder("x", dtype, {3000});
    ValueRef y = b.placeholder("y", dtype, {3000});
    ValueRef v = b.op(first, {x, y});
    ValueRef w = b.op(second, {v, square ? v : x});
    b.output(sum ? b.op(OpId::ReduceSum, {w}) : w);
    return fused_program_of(b);
  };
  auto mse = chain(float32, OpId::Sub, OpId::Mul, true, true);
  ASSERT_EQ(mse->stages.size(), 1u);
  EXPECT_NE(mse->stages[0].composed, nullptr);
  EXPECT_TRUE(mse->stages[0].sums);
  EXPECT_EQ(mse->num_blocks, 0u);  // the square is summed in registers
  EXPECT_EQ(composed_stages(*chain(float64, OpId::Add, OpId::Sub, false, false)), 1u);
  auto int_sum = chain(int32, OpId::Sub, OpId::Mul, true, true);
  EXPECT_EQ(composed_stages(*int_sum), 1u);
  EXPECT_FALSE(int_sum->stages[0].sums);  // the reduction kernel sums integers
  EXPECT_EQ(composed_stages(*chain(float32, OpId::Sub, OpId::Maximum, false, true)), 0u);
  EXPECT_EQ(composed_stages(*chain(float32, OpId::Div, OpId::Mul, false, true)), 0u);

  // Three members: the first pair composes, the third runs alone.
  BodyBuilder three;
  ValueRef x = three.placeholder("x", float32, {3000});
  ValueRef v = three.op(OpId::Mul, {three.op(OpId::Sub, {x, x}), x});
  three.output(three.op(OpId::Add, {v, x}));
  auto program = fused_program_of(three);
  EXPECT_EQ(program->stages.size(), 2u);
  EXPECT_EQ(composed_stages(*program), 1u);

  // A value two members read runs alone (its block read by both); the
  // product, read only by the sum, runs in the sum's loop.
  BodyBuilder shared;
  ValueRef z = shared.placeholder("z", int32, {3000});
  ValueRef d = shared.op(OpId::Sub, {z, z});
  shared.output(shared.op(OpId::Add, {shared.op(OpId::Mul, {d, z}), d}));
  auto two_readers = fused_program_of(shared);
  ASSERT_EQ(two_readers->stages.size(), 2u);
  EXPECT_EQ(two_readers->stages[0].composed, nullptr);
  EXPECT_NE(two_readers->stages[1].composed, nullptr);
}

// A long chain composes pair by pair however many members it has (compose
// keeps per-member flags, not searches of the stages so far): round k's
// x * s_k + t_k is one loop, its tanh another; every scalar broadcast once.
// Values bit for bit against eager.
TEST(FusedKernel, ALongChainComposesEveryPair) {
  constexpr int kRounds = 2000;
  auto chain = [](Tensor x) {
    for (int k = 0; k < kRounds; ++k) x = ag::tanh(x * 0.5f + float(k % 5 + 1));
    return x;
  };
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {4096});
  ValueRef half = b.constant(constant(0.5f));
  std::vector<ValueRef> offsets;
  for (int k = 0; k < 5; ++k) offsets.push_back(b.constant(constant(float(k + 1))));
  for (int k = 0; k < kRounds; ++k) {
    x = b.op(OpId::Tanh, {b.op(OpId::Add, {b.op(OpId::Mul, {x, half}), offsets[k % 5]})});
  }
  b.output(x);
  auto program = fused_program_of(b);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->members.size(), size_t(3 * kRounds));
  EXPECT_EQ(program->stages.size(), size_t(2 * kRounds));
  EXPECT_EQ(composed_stages(*program), size_t(kRounds));
  EXPECT_EQ(program->broadcasts.size(), 6u);
  expect_identical("long_chain", chain, ag::random_uniform({4096}, -1.0, 1.0, ag::float32, 41));
}

// Collatz's step keeping another vector than x (no guarded step): 8
// members in 3 stages: the two comparisons run in the wheres they select
// for (x % s and x // s with the first), x * t + e is one loop; no bool
// block is written.
TEST(FusedKernel, ComparisonsRunInTheirWhere) {
  BodyBuilder b;
  add_guarded_step(b, {}, int32, 5000, GuardedVariant::kKeptBranch);
  auto program = fused_program_of(b);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->members.size(), 8u);
  EXPECT_EQ(program->stages.size(), 3u);
  EXPECT_EQ(composed_stages(*program), 3u);
  for (const exec::FusedProgram::Stage& s : program->stages) {
    EXPECT_NE(program->members[size_t(s.member)].op->id, OpId::Mod);
    EXPECT_NE(program->members[size_t(s.member)].op->id, OpId::FloorDiv);
  }
  for (const exec::FusedProgram::Stage& s : program->stages) {
    EXPECT_NE(program->members[size_t(s.member)].dtype, bool_);
  }
  // A comparison that is also an output, or a where over bools, stays.
  BodyBuilder kept;
  ValueRef p = kept.placeholder("p", float32, {3000});
  ValueRef positive = kept.op(OpId::Greater, {p, kept.constant(constant(0.0f))});
  kept.output(kept.op(OpId::Where, {positive, p, kept.op(OpId::Neg, {p})}));
  kept.output(positive);
  optimize(kept.body);
  for (const Node& node : kept.body.nodes) {
    if (node.kind != NodeKind::Fused) continue;
    EXPECT_EQ(composed_stages(*compile_fused_node(kept.body, node)), 0u);
  }
}

// The members in the stage that runs `member`'s loop, by op; one stage per
// member of `program` when it is its kernel's.
size_t stages_running(const exec::FusedProgram& program, OpId op) {
  return size_t(std::count_if(program.stages.begin(), program.stages.end(),
                              [&](const exec::FusedProgram::Stage& s) {
                                return program.members[size_t(s.member)].op->id == op;
                              }));
}

// A mod by a broadcast integer read only by a where's comparison, on either
// side, runs in the where's loop; a mod by a tensor, a mod with another
// reader and a float mod run alone.
TEST(FusedKernel, ModsRunInTheirComparisonsWhere) {
  auto select = [](DType dtype, bool scalar_divisor, bool mod_left, bool mod_read_twice) {
    BodyBuilder b;
    ValueRef x = b.placeholder("x", dtype, {3000});
    ValueRef d = b.placeholder("d", dtype, scalar_divisor ? Shape{} : Shape{3000});
    ValueRef q = b.placeholder("q", dtype, {3000});
    ValueRef r = b.op(OpId::Mod, {x, d});
    ValueRef c = b.op(OpId::Less, mod_left ? std::vector<ValueRef>{r, q} : std::vector{q, r});
    ValueRef w = b.op(OpId::Where, {c, x, q});
    b.output(mod_read_twice ? b.op(OpId::Add, {w, r}) : w);
    return fused_program_of(b);
  };
  for (bool mod_left : {true, false}) {
    for (DType dtype : {int32, int64}) {
      auto program = select(dtype, true, mod_left, false);
      ASSERT_EQ(program->stages.size(), 1u);
      EXPECT_NE(program->stages[0].composed, nullptr);
      EXPECT_EQ(program->members[size_t(program->stages[0].error_member)].op->id, OpId::Mod);
    }
    auto by_tensor = select(int32, false, mod_left, false);
    EXPECT_EQ(stages_running(*by_tensor, OpId::Mod), 1u);
    EXPECT_EQ(by_tensor->stages.size(), 2u);  // the comparison still in the where's loop
    EXPECT_EQ(stages_running(*select(int32, true, mod_left, true), OpId::Mod), 1u);
    EXPECT_EQ(stages_running(*select(float32, true, mod_left, false), OpId::Mod), 1u);
  }
}

// Calls check(what, x, divisor) for int32 and int64 values from the whole
// range, with the extremes, zero and small negatives, against divisors that
// are powers of two (the mask), others, negative ones and -1 (per element).
// Returns the int32 values.
template <class Check>
Tensor for_each_division(uint64_t seed, const std::string& name, Check check) {
  std::mt19937_64 random(seed);
  std::vector<int64_t> values = {0, 1, -1, 2, -2, 3, -3, INT32_MAX, INT32_MIN, INT32_MIN + 1};
  while (values.size() < 5001) {
    const int64_t v = int64_t(random());
    values.push_back(values.size() % 2 ? v : v % 100);
  }
  std::vector<int32_t> narrow(values.begin(), values.end());  // wrapped
  values[0] = INT64_MIN;
  values[1] = INT64_MAX;
  const Tensor x32 = constant(narrow, Shape{int64_t(narrow.size())});
  const Tensor x64 = constant(values, Shape{int64_t(values.size())});
  for (int64_t d : {2, 8, 1, 1 << 30, 3, 10, -1, -2, -4, -7}) {
    for (const Tensor& x : {x32, x64}) {
      const Tensor divisor = ag::cast(constant(std::vector<int64_t>{d}, Shape{}), x.dtype());
      check(name + "_" + std::to_string(d) + "_" + std::string(dtype_name(x.dtype())), x, divisor);
    }
  }
  return x32;
}

// Against eager, bit for bit.
TEST(FusedKernel, ComposedModsAreBitIdentical) {
  const Tensor x32 = for_each_division(
      81, "mod_by", [](const std::string& what, const Tensor& x, const Tensor& divisor) {
        expect_identical(
            what + "_left", [](Tensor t, Tensor s) { return ag::where(t % s == 0, t, -t); }, x,
            divisor);
        expect_identical(
            what + "_right", [](Tensor t, Tensor s) { return ag::where(1 < t % s, t * 3, t); }, x,
            divisor);
      });
  expect_identical("collatz_extremes", [](Tensor t) { return collatz_step(t); }, x32);
}

// The quotient and remainder of one division in the where's loop: either
// member first, the quotient selected when the test holds or when it does
// not; against eager, bit for bit.
TEST(FusedKernel, ComposedQuotientsAreBitIdentical) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", int64, {3000});
  ValueRef d = b.placeholder("d", int64, {});
  ValueRef r = b.op(OpId::Mod, {x, d});
  ValueRef q = b.op(OpId::FloorDiv, {x, d});
  b.output(b.op(
      OpId::Where,
      {b.op(OpId::NotEqual, {b.constant(constant(std::vector<int64_t>{1}, Shape{})), r}), x, q}));
  auto program = fused_program_of(b);
  ASSERT_EQ(program->stages.size(), 1u);
  EXPECT_EQ(program->members[size_t(program->stages[0].error_member)].op->id, OpId::Mod);

  for_each_division(82, "divmod", [](const std::string& what, const Tensor& t, const Tensor& s) {
    expect_identical(
        what + "_quotient_first",
        [](Tensor v, Tensor k) {
          Tensor quotient = ag::floordiv(v, k);
          Tensor remainder = v % k;
          return ag::where(remainder == 0, quotient, v * 3 + 1);
        },
        t, s);
    expect_identical(
        what + "_remainder_first",
        [](Tensor v, Tensor k) {
          Tensor remainder = v % k;
          Tensor quotient = ag::floordiv(v, k);
          return ag::where(remainder == 1, -v, quotient);
        },
        t, s);
  });
}

// Calls the function `name` that `select(v, quotient, remainder)` gives,
// with v // k and v % k computed in either order, with a zero divisor: the
// error of the division's first member, at its line; then with k = 2,
// against eager.
template <class Select>
void expect_first_division_fails(const std::string& name, Select select) {
  Tensor x = ag::range(ag::constant(0), ag::constant(5000));
  for (bool quotient_first : {true, false}) {
    auto step = [quotient_first, select](Tensor v, Tensor k) {
      Tensor quotient, remainder;
      if (quotient_first) {
        quotient = ag::floordiv(v, k);
        remainder = v % k;
      } else {
        remainder = v % k;
        quotient = ag::floordiv(v, k);
      }
      return select(v, quotient, remainder);
    };
    auto fn = ag::function(step, {.name = name});
    const std::string first = quotient_first ? "floordiv" : "mod";
    try {
      fn(x, ag::constant(0));
      ADD_FAILURE() << name << ": no error";
    } catch (const ag::InvalidArgumentError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(first + ": integer division by zero"), std::string::npos) << message;
      EXPECT_NE(
          message.find("in op " + first + " (node '" + first + "') of function '" + name + "'"),
          std::string::npos)
          << message;
    }
    const Tensor got = fn(x, ag::constant(2)), want = step(x, ag::constant(2));
    EXPECT_TRUE(ag::reduce_all(got == want).item<bool>());
  }
}

// A zero divisor in a composed quotient: the first member's error.
TEST(FusedKernel, ComposedQuotientErrorsNameTheFirstMember) {
  expect_first_division_fails("halve", [](Tensor v, Tensor quotient, Tensor remainder) {
    return ag::where(remainder == 0, quotient, v);
  });
}

// Every comparison on either side, either branch of each where, both
// tests, the addend's forms and both division orders run as one composed
// stage; against eager, bit for bit, over int32 and int64 values from the
// whole range, with divisors of each kind (for_each_division), scales that
// shift, shift twice or multiply, and extreme scalars.
TEST(FusedKernel, GuardedStepsAreOneLoopAndBitIdentical) {
  std::vector<GuardedForm> forms;
  for (OpId guard : {OpId::Greater, OpId::Less, OpId::GreaterEqual, OpId::LessEqual, OpId::Equal,
                     OpId::NotEqual}) {
    for (int variant = 0; variant < 4; ++variant) {
      forms.push_back(
          {.guard = guard, .scalar_left = bool(variant & 1), .step_on_else = bool(variant & 2)});
    }
  }
  for (int variant = 0; variant < 16; ++variant) {
    forms.push_back({.test = variant & 1 ? OpId::NotEqual : OpId::Equal,
                     .quotient_on_else = bool(variant & 2),
                     .addend = variant & 4 ? OpId::Sub : OpId::Add,
                     .product_left = bool(variant & 8),
                     .quotient_first = variant % 3 == 0});
  }
  std::mt19937_64 random(84);
  const std::vector<int64_t> scalars = {0, 1, -1, 2, 3, 5, 6, -3, 7, INT32_MAX, INT32_MIN};
  // Blocks, and a flat program (7 elements): one stage either way, which
  // reads its scalars in place (no broadcast blocks: the blocks stream).
  for (const int64_t n : {int64_t(3000), int64_t(7)}) {
    for (const GuardedForm& form : forms) {
      for (DType dtype : {int32, int64}) {
        BodyBuilder b;
        add_guarded_step(b, form, dtype, n);
        auto traced = std::make_shared<Body>(b.body);
        auto program = fused_program_of(b);
        ASSERT_NE(program, nullptr);
        EXPECT_EQ(program->flat, n <= ops::kMaxFlatElements);
        ASSERT_EQ(program->stages.size(), 1u);
        ASSERT_NE(program->stages[0].composed, nullptr);
        EXPECT_TRUE(program->stages[0].scalars_in_place);
        EXPECT_TRUE(program->broadcasts.empty());
        EXPECT_EQ(program->members[size_t(program->stages[0].error_member)].op->id,
                  form.quotient_first ? OpId::FloorDiv : OpId::Mod);
        auto plan = plan_of(std::make_shared<Body>(b.body));
        for_each_division(
            85, "guarded", [&](const std::string& what, const Tensor& x, const Tensor& s) {
              if (x.dtype() != dtype) return;
              auto scalar = [&] {
                return ag::cast(
                    constant(std::vector<int64_t>{scalars[random() % scalars.size()]}, Shape{}),
                    dtype);
              };
              // Values and scalars of the random draw, and collatz's 1, 0, 3, 1.
              for (const std::vector<Tensor>& inputs :
                   {std::vector<Tensor>{ag::slice(x, {0}, {n}), scalar(), s, scalar(), scalar(),
                                        scalar()},
                    std::vector<Tensor>{ag::slice(x, {1000}, {n}), ag::cast(constant(1), dtype), s,
                                        ag::cast(constant(0), dtype), ag::cast(constant(3), dtype),
                                        ag::cast(constant(1), dtype)}}) {
                const Tensor staged = run(*plan, inputs)[0];
                const Tensor eager = run_eagerly(*traced, inputs)[0];
                ASSERT_EQ(staged.shape(), eager.shape()) << what;
                EXPECT_EQ(std::memcmp(staged.raw_data(), eager.raw_data(),
                                      size_t(eager.num_elements()) * dtype_size(dtype)),
                          0)
                    << what << " guard " << op_def(form.guard).name << " n " << n;
              }
            });
      }
    }
  }
}

// Without one vector and scalars the members run in the stages they ran
// in before (collatz's three), still as eager computes them; a vector the
// program computes is stepped in its block (two stages).
TEST(FusedKernel, GuardedStepsNeedOneVectorAndScalars) {
  const int64_t n = 3000;
  Tensor x = ag::range(ag::constant(-1500), ag::constant(1500));
  Tensor scalar = ag::constant(3);
  for (GuardedVariant variant : {GuardedVariant::kComputedVector, GuardedVariant::kKeptBranch,
                                 GuardedVariant::kTensorDivisor, GuardedVariant::kProductOutput}) {
    BodyBuilder b;
    add_guarded_step(b, {}, int32, n, variant);
    auto traced = std::make_shared<Body>(b.body);
    auto program = fused_program_of(b);
    ASSERT_NE(program, nullptr);
    if (variant == GuardedVariant::kComputedVector) {
      ASSERT_EQ(program->stages.size(), 2u);
      EXPECT_TRUE(program->stages[1].scalars_in_place);
    } else {
      EXPECT_GE(program->stages.size(), 2u) << int(variant);
      EXPECT_FALSE(program->stages.back().scalars_in_place) << int(variant);
    }
    std::vector<Tensor> inputs = {x,      ag::constant(1), ag::constant(2), ag::constant(0),
                                  scalar, ag::constant(1)};
    if (variant == GuardedVariant::kTensorDivisor) inputs[2] = ag::fill({n}, 2.0, int32);
    if (variant == GuardedVariant::kKeptBranch) inputs.push_back(-x);
    auto plan = plan_of(std::make_shared<Body>(b.body));
    const std::vector<Tensor> staged = run(*plan, inputs);
    const std::vector<Tensor> eager = run_eagerly(*traced, inputs);
    ASSERT_EQ(staged.size(), eager.size());
    for (size_t k = 0; k < staged.size(); ++k) {
      EXPECT_TRUE(ag::reduce_all(staged[k] == eager[k]).item<bool>()) << int(variant);
    }
  }
}

// A zero divisor in a guarded step: the first member's error.
TEST(FusedKernel, GuardedStepErrorsNameTheFirstDivision) {
  expect_first_division_fails("collatz", [](Tensor v, Tensor quotient, Tensor remainder) {
    return ag::where(v > 1, ag::where(remainder == 0, quotient, 3 * v + 1), v);
  });
}

TEST(FusedKernel, ComposedModErrorsNameTheMod) {
  auto fn = ag::function([](Tensor x, Tensor d) { return ag::where(x % d == 0, x, x + 1); },
                         {.name = "parity"});
  Tensor x = ag::range(ag::constant(0), ag::constant(5000));
  try {
    fn(x, ag::constant(0));
    FAIL() << "no error";
  } catch (const ag::InvalidArgumentError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("mod: integer division by zero"), std::string::npos) << message;
    EXPECT_NE(message.find("in op mod (node 'mod') of function 'parity'"), std::string::npos)
        << message;
    EXPECT_NE(message.find("pass_fusion_test.cpp"), std::string::npos) << message;
  }
  EXPECT_EQ(fn(x, ag::constant(2)).shape(), x.shape());  // the same function again
}

// An integer product with a broadcast scalar, read by an add, sub or mul,
// runs in scaled_pair (shifts for a power of two or a sum of two, else a
// multiply): against eager, bit for bit, for scalars of each kind, on either
// side, both dtypes, values over the whole range.
TEST(FusedKernel, ScaledPairsAreBitIdentical) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", int32, {3000});
  ValueRef s = b.placeholder("s", int32, {});
  b.output(b.op(OpId::Sub, {x, b.op(OpId::Mul, {s, x})}));
  auto program = fused_program_of(b);
  ASSERT_EQ(program->stages.size(), 1u);
  EXPECT_NE(program->stages[0].composed, nullptr);

  std::mt19937_64 random(83);
  std::vector<int64_t> values = {0, 1, -1, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};
  while (values.size() < 5001) values.push_back(int64_t(random()));
  std::vector<int32_t> narrow(values.begin(), values.end());  // wrapped
  const Tensor x32 = constant(narrow, Shape{int64_t(narrow.size())});
  const Tensor x64 = constant(values, Shape{int64_t(values.size())});
  for (int64_t scale : {int64_t(1), int64_t(2), int64_t(3), int64_t(6), int64_t(7), int64_t(12),
                        int64_t(0), int64_t(-3), int64_t(1) << 30, (int64_t(1) << 30) + 1,
                        int64_t(INT32_MAX), int64_t(INT32_MIN), (int64_t(1) << 40) + 4}) {
    for (const Tensor& t : {x32, x64}) {
      const Tensor s = ag::cast(constant(std::vector<int64_t>{scale}, Shape{}), t.dtype());
      const std::string what = std::to_string(scale) + "_" + std::string(dtype_name(t.dtype()));
      expect_identical("scaled_add_" + what, [](Tensor v, Tensor k) { return v * k + 1; }, t, s);
      expect_identical("scaled_sub_" + what, [](Tensor v, Tensor k) { return v - k * v; }, t, s);
      expect_identical(
          "scaled_square_" + what, [](Tensor v, Tensor k) { return (k * v) * (k * v); }, t, s);
    }
  }
}

// Composed stages against eager, bit for bit: every comparison, both
// operand orders, scalars, int64 and float64, whole and partial blocks.
TEST(FusedKernel, ComposedStagesAreBitIdentical) {
  Tensor i = ag::range(ag::constant(-2500), ag::constant(2501));
  expect_identical("collatz_step", [](Tensor t) { return collatz_step(t); }, i);
  expect_identical("int_affine", [](Tensor t) { return ag::reduce_max((t * 7 - 3) * t); }, i);
  expect_identical(
      "compare_select",
      [](Tensor t) {
        return ag::where(t < 5, t, -t) + ag::where(t <= -3, t * 2, t) +
               ag::where(t >= 0, t, t - 1) + ag::where(t != 7, t, t + 5);
      },
      i);
  Tensor l = ag::cast(i, ag::int64) * ag::constant(int64_t(1) << 33);
  expect_identical("int64", [](Tensor t) { return ag::where(t > 0, t * 3 + 1, t - (t * t)); }, l);
  Tensor f = ag::random_uniform({5001}, -2.0, 2.0, ag::float32, 71);
  Tensor g = ag::random_uniform({5001}, -2.0, 2.0, ag::float64, 72);
  expect_identical(
      "float_select", [](Tensor a) { return ag::where(a * 0.5f < 0.25f, a, 1.0f - a); }, f);
  expect_identical(
      "float64_select", [](Tensor a) { return ag::where(a == a, a - 0.5, a) * (a + 1.0); }, g);
}

// 5000 elements: four whole blocks and a partial one; scalars on either
// side, the second member reading the first's value once or twice.
TEST(FusedKernel, ComposedChainsAreBitIdentical) {
  Tensor x = ag::random_uniform({5000}, -2.0, 2.0, ag::float32, 51);
  Tensor y = ag::random_uniform({5000}, -2.0, 2.0, ag::float32, 52);
  Tensor z = ag::random_uniform({5000}, -2.0, 2.0, ag::float32, 53);
  expect_identical(
      "squared_difference", [](Tensor a, Tensor b) { return (a - b) * (a - b); }, x, y);
  expect_identical("multiply_add", [](Tensor a, Tensor b, Tensor c) { return a * b + c; }, x, y, z);
  expect_identical("minus_sum", [](Tensor a, Tensor b, Tensor c) { return c - (a + b); }, x, y, z);
  expect_identical("scalars", [](Tensor a) { return 2.0f * (a - 0.5f); }, x);
  expect_identical("scalar_first", [](Tensor a) { return (0.25f - a) * a; }, x);
  Tensor xd = ag::random_uniform({5000}, -2.0, 2.0, ag::float64, 54);
  Tensor yd = ag::random_uniform({5000}, -2.0, 2.0, ag::float64, 55);
  expect_identical("float64", [](Tensor a, Tensor b) { return (a + b) * (a + b); }, xd, yd);
}

// A composed sum adds in the member-by-member run's lanes and order: the
// same bits as a chain that does not compose (the maximum with 0 keeps each
// square as it is), within one block (the composed sum streams larger
// blocks than the other's).
TEST(FusedKernel, ComposedSumsEqualTheMemberByMemberSums) {
  Tensor x = ag::random_uniform({1000}, -1.0, 1.0, ag::float32, 61);
  Tensor y = ag::random_uniform({1000}, -1.0, 1.0, ag::float32, 62);
  auto composed = ag::function(
      [](Tensor a, Tensor b) { return ag::reduce_mean((a - b) * (a - b)); }, {.name = "composed"});
  auto by_member = ag::function(
      [](Tensor a, Tensor b) { return ag::reduce_mean(ag::maximum((a - b) * (a - b), 0.0f)); },
      {.name = "by_member"});
  EXPECT_EQ(composed(x, y).item<float>(), by_member(x, y).item<float>());
}

TEST(FusedKernel, MemberErrorsNameTheMember) {
  auto fn = ag::function([](Tensor x, Tensor d) { return ag::floordiv(x + 1, d) * 2; },
                         {.name = "divide"});
  Tensor x = ag::range(ag::constant(0), ag::constant(10));
  try {
    fn(x, ag::constant(0));
    FAIL() << "no error";
  } catch (const ag::InvalidArgumentError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("floordiv: integer division by zero"), std::string::npos) << message;
    EXPECT_NE(message.find("in op floordiv (node 'floordiv') of function 'divide'"),
              std::string::npos)
        << message;
    EXPECT_EQ(message.find("Fused"), std::string::npos) << message;
  }
}

// A fused group of a few elements without a reduction (collatz on two
// values) runs flat: each member's flat kernel over the elements, or a
// guarded step's loop (collatz's step is one).
TEST(FusedKernel, SmallGroupsRunFlatAndBitIdentical) {
  BodyBuilder b;
  add_collatz_step(b, {2});
  auto traced = std::make_shared<Body>(b.body);
  auto optimized = std::make_shared<Body>(b.body);
  optimize(*optimized);
  auto plan = plan_of(optimized);
  EXPECT_EQ(plan->num_steps(), 1u);
  EXPECT_EQ(plan->num_flat_steps(), 1u);
  for (const Node& node : optimized->nodes) {
    if (node.kind != NodeKind::Fused) continue;
    auto program = compile_fused_node(*optimized, node);
    EXPECT_TRUE(program->flat);
    ASSERT_EQ(program->stages.size(), 1u);
    EXPECT_NE(program->stages[0].composed, nullptr);
  }
  for (auto values : {std::vector<int32_t>{27, 97}, {1, -6}, {-7, 2}, {1 << 30, 0}}) {
    expect_eager_values(*plan, *traced, {constant(values, Shape{2})});
  }
  // With a reduction, or past the flat size, the block kernel runs.
  BodyBuilder r;
  ValueRef y = r.placeholder("y", float32, {4});
  r.output(r.op(OpId::ReduceSum, {r.op(OpId::Mul, {y, y})}));
  optimize(r.body);
  EXPECT_EQ(plan_of(std::make_shared<Body>(r.body))->num_flat_steps(), 0u);
  expect_identical(
      "past_flat", [](Tensor t) { return ag::tanh(t * 0.5f) + 1.0f; },
      ag::random_uniform({17}, -2.0, 2.0, ag::float32, 41));
}

// The value and its reduction from one fused step (composed stages and a
// kernel stage; the value written into the output, then reduced): against
// eager, bit for bit, for each exact reduction; on whole and partial blocks.
TEST(FusedKernel, ASecondReducedOutputIsBitIdentical) {
  for (OpId reduction :
       {OpId::ReduceMax, OpId::ReduceMin, OpId::ReduceSum, OpId::ReduceProd, OpId::ReduceMean}) {
    for (int64_t n : {17, 1024, 5000}) {
      BodyBuilder b;
      ValueRef x = b.placeholder("x", int32, {n});
      ValueRef y = b.op(OpId::Where, {b.op(OpId::Greater, {x, b.constant(constant(0))}),
                                      b.op(OpId::FloorDiv, {x, b.constant(constant(3))}),
                                      b.op(OpId::Add, {b.op(OpId::Mul, {x, x}), x})});
      b.output(y);
      b.output(b.op(reduction, {y}));
      auto traced = std::make_shared<Body>(b.body);
      auto optimized = std::make_shared<Body>(b.body);
      optimize(*optimized);
      auto plan = plan_of(optimized);
      EXPECT_EQ(plan->num_steps(), 1u) << optimized->to_string();
      std::vector<int32_t> values;
      for (int64_t i = 0; i < n; ++i) values.push_back(int32_t((i * 7919) % 20001) - 10000);
      values[0] = INT32_MIN;
      values[size_t(n) / 2] = INT32_MAX;
      expect_eager_values(*plan, *traced, {constant(values, Shape{n})});
    }
  }
}

// The where that gives the value folds an integer max or min of it in its
// loop: collatz's step and its maximum (the loop's condition) in one stage
// (a guarded step), against eager; not a float maximum, nor a sum.
TEST(FusedKernel, TheLastWhereFoldsAnIntegerMaximum) {
  auto last_stage_folds = [](DType dtype, OpId reduction) {
    BodyBuilder b;
    ValueRef x = b.placeholder("x", dtype, {5000});
    ValueRef zero = b.constant(ag::cast(constant(0), dtype));
    ValueRef y = b.op(OpId::Where, {b.op(OpId::Greater, {x, zero}), x, b.op(OpId::Neg, {x})});
    b.output(y);
    b.output(b.op(reduction, {y}));
    auto program = fused_program_of(b);
    EXPECT_TRUE(program->keeps_value);
    return program->stages.back().folds;
  };
  EXPECT_TRUE(last_stage_folds(int32, OpId::ReduceMax));
  EXPECT_TRUE(last_stage_folds(int64, OpId::ReduceMin));
  EXPECT_FALSE(last_stage_folds(int32, OpId::ReduceSum));
  EXPECT_FALSE(last_stage_folds(float32, OpId::ReduceMax));

  BodyBuilder collatz;
  add_collatz_step(collatz, {5000});
  collatz.output(collatz.op(OpId::ReduceMax, {collatz.body.outputs[0]}));
  auto traced = std::make_shared<Body>(collatz.body);
  auto program = fused_program_of(collatz);
  EXPECT_EQ(program->stages.size(), 1u);
  EXPECT_TRUE(program->stages.back().folds);
  Tensor x = ag::range(ag::constant(-2000), ag::constant(3000));
  expect_eager_values(*plan_of(std::make_shared<Body>(collatz.body)), *traced, {x});
  expect_eager_values(*plan_of(std::make_shared<Body>(collatz.body)), *traced, {-x});
}

TEST(FusedKernel, PlanRunsTheChainAsOneStep) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {5000});
  ValueRef y = b.placeholder("y", float32, {5000});
  ValueRef d = b.op(OpId::Sub, {x, y});
  b.output(b.op(OpId::ReduceMax, {b.op(OpId::Mul, {d, d})}));
  b.output(b.op(OpId::Tanh, {b.op(OpId::Add, {x, y})}));
  auto traced = std::make_shared<Body>(b.body);
  auto optimized = std::make_shared<Body>(b.body);
  optimize(*optimized);
  auto plan = plan_of(optimized);
  EXPECT_EQ(plan->num_steps(), 2u);
  Tensor xs = ag::random_uniform({5000}, -3.0, 3.0, ag::float32, 31);
  Tensor ys = ag::random_uniform({5000}, -3.0, 3.0, ag::float32, 32);
  // max is exact in any order.
  expect_eager_values(*plan, *traced, {xs, ys});
}

}  // namespace
}  // namespace ag::passes
