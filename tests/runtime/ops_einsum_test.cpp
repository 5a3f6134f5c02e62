// ag::einsum against plain loops, its lowering onto matmul, and its errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "ops_test_util.h"

namespace {

using ag::Shape;
using ag::Tensor;
using ag_test::expect_error;

Tensor sample(Shape shape, uint64_t seed) {
  return ag::random_uniform(shape, -2, 2, ag::float64, seed);
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-12) << what << " [" << i << "]";
}

TEST(Einsum, MatrixProductAndBatchedProduct) {
  Tensor a = sample({3, 4}, 1), b = sample({4, 5}, 2);
  std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>(), want(15, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 5; ++k)
      for (int j = 0; j < 4; ++j)
        want[size_t(i * 5 + k)] += av[size_t(i * 4 + j)] * bv[size_t(j * 5 + k)];
  Tensor c = ag::einsum("ij,jk->ik", {a, b});
  EXPECT_EQ(c.shape(), (Shape{3, 5}));
  expect_near(c.to_vector<double>(), want, "ij,jk->ik");
  // Implicit output: the letters that appear once, alphabetically.
  expect_near(ag::einsum("ij,jk", {a, b}).to_vector<double>(), want, "ij,jk");

  Tensor x = sample({2, 3, 4}, 3), y = sample({2, 4, 5}, 4);
  std::vector<double> xv = x.to_vector<double>(), yv = y.to_vector<double>(), batched(30, 0.0);
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 5; ++k)
        for (int j = 0; j < 4; ++j)
          batched[size_t(n * 15 + i * 5 + k)] +=
              xv[size_t(n * 12 + i * 4 + j)] * yv[size_t(n * 20 + j * 5 + k)];
  expect_near(ag::einsum(" bij, bjk -> bik ", {x, y}).to_vector<double>(), batched, "bij,bjk");
  // The output transposed: "bik" as "bki".
  std::vector<double> transposed(30);
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 5; ++k)
        transposed[size_t(n * 15 + k * 3 + i)] = batched[size_t(n * 15 + i * 5 + k)];
  expect_near(ag::einsum("bij,bjk->bki", {x, y}).to_vector<double>(), transposed, "bij,bjk->bki");
}

TEST(Einsum, OneOperand) {
  Tensor x = sample({3, 4}, 5);
  std::vector<double> xv = x.to_vector<double>(), rows(3, 0.0), all(1, 0.0), t(12);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      rows[size_t(i)] += xv[size_t(i * 4 + j)];
      all[0] += xv[size_t(i * 4 + j)];
      t[size_t(j * 3 + i)] = xv[size_t(i * 4 + j)];
    }
  expect_near(ag::einsum("ij->i", {x}).to_vector<double>(), rows, "ij->i");
  expect_near(ag::einsum("ij->", {x}).to_vector<double>(), all, "ij->");
  expect_near(ag::einsum("ij->ji", {x}).to_vector<double>(), t, "ij->ji");
  expect_near(ag::einsum("ba", {x}).to_vector<double>(), t, "ba (implicit: ab)");
}

TEST(Einsum, DiagonalAndTrace) {
  Tensor x = sample({2, 3, 3}, 6);
  std::vector<double> xv = x.to_vector<double>(), diagonal(6), trace(2, 0.0);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i) {
      diagonal[size_t(b * 3 + i)] = xv[size_t(b * 9 + i * 3 + i)];
      trace[size_t(b)] += xv[size_t(b * 9 + i * 3 + i)];
    }
  expect_near(ag::einsum("...ii->...i", {x}).to_vector<double>(), diagonal, "...ii->...i");
  expect_near(ag::einsum("bii->b", {x}).to_vector<double>(), trace, "bii->b");
  // A diagonal in the middle of three repeats: x[i, i, i].
  Tensor cube = sample({3, 3, 3}, 7);
  std::vector<double> cv = cube.to_vector<double>(), iii(3);
  for (int i = 0; i < 3; ++i) iii[size_t(i)] = cv[size_t(i * 9 + i * 3 + i)];
  expect_near(ag::einsum("iii->i", {cube}).to_vector<double>(), iii, "iii->i");
}

TEST(Einsum, InnerOuterAndElementwiseProducts) {
  Tensor u = sample({4}, 8), v = sample({4}, 9), w = sample({3}, 10);
  std::vector<double> uv = u.to_vector<double>(), vv = v.to_vector<double>(),
                      wv = w.to_vector<double>();
  double inner = 0;
  std::vector<double> outer(12), elementwise(4);
  for (int i = 0; i < 4; ++i) {
    inner += uv[size_t(i)] * vv[size_t(i)];
    elementwise[size_t(i)] = uv[size_t(i)] * vv[size_t(i)];
    for (int j = 0; j < 3; ++j) outer[size_t(i * 3 + j)] = uv[size_t(i)] * wv[size_t(j)];
  }
  expect_near(ag::einsum("i,i", {u, v}).to_vector<double>(), {inner}, "i,i");
  expect_near(ag::einsum("i,j->ij", {u, w}).to_vector<double>(), outer, "i,j->ij");
  expect_near(ag::einsum("i,i->i", {u, v}).to_vector<double>(), elementwise, "i,i->i");
}

TEST(Einsum, ThreeOperandsAndEllipsisBroadcast) {
  Tensor a = sample({2, 3}, 11), b = sample({3, 4}, 12), c = sample({4, 2}, 13);
  std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>(),
                      cv = c.to_vector<double>(), want(4, 0.0);
  for (int i = 0; i < 2; ++i)
    for (int l = 0; l < 2; ++l)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k)
          want[size_t(i * 2 + l)] +=
              av[size_t(i * 3 + j)] * bv[size_t(j * 4 + k)] * cv[size_t(k * 2 + l)];
  expect_near(ag::einsum("ij,jk,kl->il", {a, b, c}).to_vector<double>(), want, "ij,jk,kl->il");

  // "..." of [2, 1] against [3]: broadcast to [2, 3].
  Tensor x = sample({2, 1, 3, 4}, 14), y = sample({3, 4, 5}, 15);
  Tensor z = ag::einsum("...ij,...jk->...ik", {x, y});
  EXPECT_EQ(z.shape(), (Shape{2, 3, 3, 5}));
  std::vector<double> xv = x.to_vector<double>(), yv = y.to_vector<double>(), zw(90, 0.0);
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 3; ++q)
      for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 5; ++k)
          for (int j = 0; j < 4; ++j)
            zw[size_t(((p * 3 + q) * 3 + i) * 5 + k)] +=
                xv[size_t(p * 12 + i * 4 + j)] * yv[size_t(q * 20 + j * 5 + k)];
  expect_near(z.to_vector<double>(), zw, "...ij,...jk->...ik");
}

TEST(Einsum, ContractionRunsOnMatmulAndDifferentiates) {
  auto f = ag::function(
      [](const Tensor& a, const Tensor& b) { return ag::einsum("bij,bjk->bik", {a, b}); });
  Tensor a = sample({2, 3, 4}, 16), b = sample({2, 4, 5}, 17);
  const std::vector<std::string> ops = f.get_concrete_function(a, b).graph().ops();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "matmul"), ops.end());
  ag::GradientTape tape;
  tape.watch(a);
  Tensor g = tape.gradient(ag::reduce_sum(ag::einsum("bij,bjk->bik", {a, b})), a);
  // d/da[b,i,j] of the sum = sum_k b[b,j,k].
  expect_near(
      g.to_vector<double>(),
      ag::broadcast_to(ag::expand_dims(ag::reduce_sum(b, {2}), 1), {2, 3, 4}).to_vector<double>(),
      "gradient");
}

TEST(Einsum, EquationErrorsNameTheCharacterAndPosition) {
  Tensor m = ag::zeros(Shape{2, 3}), n = ag::zeros(Shape{3, 4});
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::einsum("ij,j%->ik", {m, n}); },
      "einsum: invalid character '%' at position 4 of 'ij,j%->ik'");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::einsum("i.j,jk->ik", {m, n}); },
      "einsum: '.' at position 1 of 'i.j,jk->ik' is not part of an ellipsis '...'");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::einsum("ij,jk->iz", {m, n}); },
      "einsum: output subscript 'z' at position 8 of 'ij,jk->iz' appears in no input");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::einsum("ij,jk->ii", {m, n}); },
      "einsum: output subscript 'i' at position 8 of 'ij,jk->ii' appears twice in the output");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::einsum("ij,jk-ik", {m, n}); },
      "einsum: '-' at position 5 of 'ij,jk-ik' is not part of an arrow '->'");
  expect_error<ag::InvalidArgumentError>([&] { ag::einsum("ij,jk->ik->i", {m, n}); },
                                         "einsum: a second '->' at position 9 of 'ij,jk->ik->i'");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::einsum("...i...,jk->ik", {m, n}); },
      "einsum: a second '...' at position 4 of '...i...,jk->ik' in one term");
}

TEST(Einsum, OperandErrors) {
  Tensor m = ag::zeros(Shape{2, 3}), n = ag::zeros(Shape{4, 5});
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::einsum("ij,jk->ik", {m, n}); },
      "einsum: subscript 'j' has dim 3 in operand 0 and 4 in operand 1");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::einsum("ij,jk->ik", {m}); },
      "einsum: equation 'ij,jk->ik' has 2 input terms but 1 operands were given");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::einsum("ijk,kl->il", {m, n}); },
      "einsum: operand 0 has rank 2 but its subscripts 'ijk' (at position 0) name 3 dims");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::einsum("ij,...jkl->ik", {m, n}); },
      "einsum: operand 1 has rank 2 but its subscripts '...jkl' (at position 3) name at least "
      "3 dims");
  expect_error<ag::InvalidArgumentError>([&] { ag::einsum("", {}); },
                                         "einsum: needs at least one operand");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::einsum("ij,jk->ik", {m, ag::zeros(Shape{3, 4}, ag::float64)}); },
      "einsum: operands must be numeric and of one dtype, got float32 (operand 0) and float64 "
      "(operand 1)");
}

}  // namespace
