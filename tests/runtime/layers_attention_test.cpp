// ag::layers::MultiHeadAttention against a reference computed by plain loops
// (self- and cross-attention, a mask), eager against traced, gradients
// against finite differences, the training flag of its dropout, and its
// errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"
#include "layers_test_util.h"

namespace {

using ag_test::error_of;
using layers_test::as_doubles;
using layers_test::expect_near;
using layers_test::expect_same;
using layers_test::Vec;
using layers_test::wavy;
namespace L = ag::layers;

struct Dims {
  int64_t batch, t, s, heads, key_dim, value_dim;
};

// x [batch, steps, features] by kernel [features, heads, dim] plus bias
// [heads, dim]: [batch, steps, heads, dim].
Vec project(const Vec& x, const Vec& kernel, const Vec& bias, int64_t rows, int64_t features,
            int64_t width) {
  Vec out(size_t(rows * width));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width; ++j) {
      double sum = bias[size_t(j)];
      for (int64_t c = 0; c < features; ++c)
        sum += x[size_t(r * features + c)] * kernel[size_t(c * width + j)];
      out[size_t(r * width + j)] = sum;
    }
  return out;
}

// The layer's output for query, value and key (and a 0/1 mask [batch, T, S],
// or none), from its variables, by loops.
Vec attention_reference(const L::MultiHeadAttention& layer, const Dims& d, const ag::Tensor& query,
                        const ag::Tensor& value, const ag::Tensor& key, const Vec& mask) {
  auto w = layer.variables();
  const int64_t qf = query.shape()[2], vf = value.shape()[2], kf = key.shape()[2];
  const int64_t kw = d.heads * d.key_dim, vw = d.heads * d.value_dim;
  Vec q = project(as_doubles(query), as_doubles(w[0].read()), as_doubles(w[1].read()),
                  d.batch * d.t, qf, kw);
  Vec k = project(as_doubles(key), as_doubles(w[2].read()), as_doubles(w[3].read()), d.batch * d.s,
                  kf, kw);
  Vec v = project(as_doubles(value), as_doubles(w[4].read()), as_doubles(w[5].read()),
                  d.batch * d.s, vf, vw);
  Vec wo = as_doubles(w[6].read()), bo = as_doubles(w[7].read());
  const int64_t out_features = int64_t(bo.size());
  Vec out(size_t(d.batch * d.t * out_features));
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t t = 0; t < d.t; ++t) {
      Vec context(size_t(vw), 0.0);
      for (int64_t h = 0; h < d.heads; ++h) {
        Vec scores(size_t(d.s));
        double top = -1e300;
        for (int64_t s = 0; s < d.s; ++s) {
          double dot = 0;
          for (int64_t e = 0; e < d.key_dim; ++e)
            dot += q[size_t((b * d.t + t) * kw + h * d.key_dim + e)] *
                   k[size_t((b * d.s + s) * kw + h * d.key_dim + e)];
          dot /= std::sqrt(double(d.key_dim));
          if (!mask.empty()) dot += (mask[size_t((b * d.t + t) * d.s + s)] - 1) * 1e9;
          scores[size_t(s)] = dot;
          top = std::max(top, dot);
        }
        double total = 0;
        for (double& x : scores) total += (x = std::exp(x - top));
        for (int64_t s = 0; s < d.s; ++s)
          for (int64_t e = 0; e < d.value_dim; ++e)
            context[size_t(h * d.value_dim + e)] +=
                scores[size_t(s)] / total * v[size_t((b * d.s + s) * vw + h * d.value_dim + e)];
      }
      for (int64_t o = 0; o < out_features; ++o) {
        double sum = bo[size_t(o)];
        for (int64_t j = 0; j < vw; ++j)
          sum += context[size_t(j)] * wo[size_t(j * out_features + o)];
        out[size_t((b * d.t + t) * out_features + o)] = sum;
      }
    }
  return out;
}

TEST(LayersMultiHeadAttention, SelfAttentionMatchesLoopsEagerAndTraced) {
  L::MultiHeadAttention mha(2, 3, {.bias_initializer = {"uniform", 4}});
  ag::Tensor x = wavy({2, 4, 5});
  ag::Tensor y = mha(x);
  ASSERT_EQ(y.shape(), ag::Shape({2, 4, 5}));
  std::vector<std::string> paths;
  for (const auto& [path, v] : mha.named_variables()) paths.push_back(path.substr(path.find('/')));
  EXPECT_EQ(paths, (std::vector<std::string>{
                       "/query/kernel", "/query/bias", "/key/kernel", "/key/bias", "/value/kernel",
                       "/value/bias", "/attention_output/kernel", "/attention_output/bias"}));
  EXPECT_EQ(mha.variables()[0].shape(), ag::Shape({5, 2, 3}));
  EXPECT_EQ(mha.variables()[6].shape(), ag::Shape({2, 3, 5}));
  expect_near(as_doubles(y), attention_reference(mha, {2, 4, 4, 2, 3, 3}, x, x, x, {}), 1e-5,
              "self-attention");
  auto f = ag::function([&](ag::Tensor in) { return mha(in); });
  expect_same(f(x), y, "traced vs eager");
}

TEST(LayersMultiHeadAttention, CrossAttentionWithAMaskMatchesLoops) {
  L::MultiHeadAttention mha(
      3, 2, {.value_dim = 4, .output_shape = 6, .bias_initializer = {"uniform", 5}});
  ag::Tensor query = wavy({2, 3, 5}), value = wavy({2, 4, 7}, 1.0, 0.9),
             key = wavy({2, 4, 2}, 1.0, 1.7);
  Vec mask;
  for (int i = 0; i < 2 * 3 * 4; ++i) mask.push_back(i % 3 == 1 ? 0.0 : 1.0);
  ag::Tensor mask_tensor =
      ag::cast(ag::constant(std::vector<float>(mask.begin(), mask.end()), {2, 3, 4}), ag::bool_);
  ag::Tensor y = mha(query, value, key, mask_tensor);
  ASSERT_EQ(y.shape(), ag::Shape({2, 3, 6}));
  EXPECT_EQ(mha.variables()[2].shape(), ag::Shape({2, 3, 2})) << "key/kernel";
  EXPECT_EQ(mha.variables()[4].shape(), ag::Shape({7, 3, 4})) << "value/kernel";
  expect_near(as_doubles(y), attention_reference(mha, {2, 3, 4, 3, 2, 4}, query, value, key, mask),
              1e-5, "masked cross-attention");
  auto f = ag::function(
      [&](ag::Tensor q, ag::Tensor v, ag::Tensor k, ag::Tensor m) { return mha(q, v, k, m); });
  expect_same(f(query, value, key, mask_tensor), y, "traced vs eager");
  // Without a key, the value is the key too.
  L::MultiHeadAttention no_key(1, 2);
  ag::Tensor q1 = wavy({1, 3, 5}), v1 = wavy({1, 3, 4});
  ag::Tensor y1 = no_key(q1, v1, ag::Tensor());
  expect_near(as_doubles(y1), attention_reference(no_key, {1, 3, 3, 1, 2, 2}, q1, v1, v1, {}), 1e-5,
              "key defaults to the value");
}

TEST(LayersMultiHeadAttention, GradientsMatchFiniteDifferences) {
  L::MultiHeadAttention mha(2, 2, {.bias_initializer = {"uniform", 6}});
  layers_test::check_gradients(mha, wavy({1, 3, 3}, 1.0, 0.2, ag::float64), false, 1e-5);
}

TEST(LayersMultiHeadAttention, DropoutOnlyInTraining) {
  L::MultiHeadAttention mha(2, 4, {.dropout = 0.5, .seed = 3});
  ag::Tensor x = wavy({1, 6, 4});
  ag::Tensor inference = mha(x);
  expect_same(mha(x, false), inference, "inference twice");
  EXPECT_NE(as_doubles(mha(x, true)), as_doubles(inference)) << "training drops scores";
}

TEST(LayersMultiHeadAttention, ErrorsSayWhatWhereAndWhatToDo) {
  L::MultiHeadAttention mha(2, 2);
  std::string rank = error_of([&] { mha(ag::ones({4, 5})); });
  EXPECT_CONTAINS(rank, "(MultiHeadAttention) called at layers_attention_test.cpp:");
  EXPECT_CONTAINS(rank, "expected an input of rank 3, but got one of shape (4, 5)");
  EXPECT_CONTAINS(error_of([&] { mha(ag::ones({1, 2, 3}), ag::ones({2, 3}), ag::Tensor()); }),
                  "the value and the key must be [batch, steps, features], but got one of shape "
                  "(2, 3)");
  mha(ag::ones({1, 2, 3}), ag::ones({1, 4, 5}), ag::Tensor());
  EXPECT_CONTAINS(error_of([&] { mha(ag::ones({1, 2, 3}), ag::ones({1, 4, 6}), ag::Tensor()); }),
                  "built for values with 5 features and keys with 5, but got a value of shape "
                  "(1, 4, 6)");
  EXPECT_CONTAINS(error_of([&] { mha(ag::ones({2, 2, 3}), ag::ones({1, 4, 5}), ag::Tensor()); }),
                  "the query's batch is 2 but the value's is 1");
  EXPECT_CONTAINS(error_of([] { L::MultiHeadAttention(0, 2); }), "must be positive");
}

}  // namespace
