// A loop variable kept in its array's rows (exec/plan_views.cpp, keep_rows_in_arrays) whose
// op's other operand broadcasts: the state [4, 8] plus a row [8] of the sequence. Found by
// tests/fuzz/gen.py --seed 2401 (feature transposed_arrays; f_2401_49, minimised).
#include <ag/ag.h>

#include "harness.h"

static ag::Tensor fz_clip(ag::Tensor v) {
  return ag::minimum(ag::maximum(v, -32), 32);
}

// [3, x's shape]: x, x + 1 and 2x - 3 stacked on a new last axis, then
// transposed to the front, as dynamic_rnn reads its input row by row.
static ag::Tensor fz_transposed_rows(ag::Tensor x) {
  std::vector<int64_t> to_front{x.rank()};
  for (int64_t d = 0; d < x.rank(); ++d) to_front.push_back(d);
  return ag::transpose(ag::stack({x, x + 1, x * 2 - 3}, x.rank()), to_front);
}

// Row i of them, i wrapped into [0, 3) (% is a floor mod).
static ag::Tensor fz_row(ag::Tensor rows, ag::Tensor i) {
  return rows[i % 3];
}

// A `shape` tensor of x's dtype: a pattern in [-k, k] that `salt` varies, plus
// the sum of x when `tied` (a constant otherwise).
static ag::Tensor fz_sequence(ag::Tensor x, std::vector<int64_t> shape, int salt, int k,
                              bool tied) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  ag::Tensor iota = ag::reshape(ag::cast(ag::range(ag::Tensor(count)), x.dtype()), shape);
  ag::Tensor pattern = (iota * salt + salt / 2) % (2 * k + 1) - k;
  return tied ? pattern + ag::reduce_sum(x) : pattern;
}

// A scalar that any element of t moved or changed changes: t weighted by
// 1..7 along its flat order, summed (exact: t holds small integers). Sizes
// from the graph: a dynamic-size array's stack has an unknown first dim.
static ag::Tensor fz_digest(ag::Tensor t) {
  ag::Tensor iota = ag::cast(ag::range(ag::size(t)), t.dtype());
  return ag::reduce_sum(ag::reshape(t, {-1}) * (iota % 7 + 1));
}

// fz-begin f_2401_49
AG_FUNCTION ag::Tensor f_2401_49(ag::Tensor x, ag::Tensor n, int m) {
  const ag::Tensor ar1_seq = fz_sequence(x, {4, 8}, 2, 3, true);
  ag::Tensor ar1_s = fz_sequence(x, {4, 8}, 8, 3, false);
  ag::TensorArray ar1_a(x.dtype(), 4);
  for (auto ar1_i : ag::range(ag::Tensor(int64_t{4}))) {
    ar1_s = ar1_seq[ar1_i] + ar1_s;
    ar1_a = ar1_a.write(ar1_i, ar1_s);
  }
  return x + fz_digest(ag::transpose(ar1_a.stack(), {1, 0, 2}));
}
// fz-end f_2401_49

static const FzCase fz_cases[] = {
    {"f_2401_49",
     &f_2401_49,
     3,
     {{ag::int32, {}, {3}, 1, 1},
      {ag::float64, {2, 3}, {-4, 2, 0, 1, 3, -1}, 2, 1},
      {ag::int32, {3}, {1, -2, 4}, 0, 1},
      {ag::int32, {}, {3}, 1, 1}}},
};

int main(int argc, char** argv) {
  return fz_run(fz_cases, argc, argv);
}
