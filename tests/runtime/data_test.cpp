// ag::data: each transformation against a reference computed by hand, the
// staged loop over a dataset (written in the form agc emits) against the
// eager one, and the errors with their messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <random>
#include <thread>

#include <ag/ag.h>

#include "error_test_util.h"

namespace {

using ag::Tensor;
using ag_test::error_of;
namespace data = ag::data;

template <class D>
std::vector<int64_t> scalars(const D& ds) {
  std::vector<int64_t> out;
  for (const Tensor& t : ds) out.push_back(t.template item<int64_t>());
  return out;
}

std::vector<int64_t> iota(int64_t n, int64_t start = 0) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

TEST(DataTest, RangeAndSpec) {
  EXPECT_EQ(scalars(data::range(5)), iota(5));
  EXPECT_EQ(scalars(data::range(2, 11, 3)), (std::vector<int64_t>{2, 5, 8}));
  EXPECT_EQ(scalars(data::range(5, 0, -2)), (std::vector<int64_t>{5, 3, 1}));
  auto spec = data::range(3).element_spec();
  ASSERT_EQ(spec.size(), 1u);
  EXPECT_EQ(spec[0].to_string(), "TensorSpec(shape=(), dtype=int64)");
}

TEST(DataTest, FromTensorSlicesOfATupleGivesRowsInOrder) {
  Tensor x = ag::constant({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  Tensor y = ag::constant({10, 20, 30});
  auto ds = data::from_tensor_slices(std::tuple{x, y});
  ASSERT_EQ(ds.element_spec().size(), 2u);
  EXPECT_EQ(ds.element_spec()[0].to_string(), "TensorSpec(shape=(2,), dtype=float32)");
  EXPECT_EQ(ds.element_spec()[1].to_string(), "TensorSpec(shape=(), dtype=int32)");
  std::vector<std::string> rows;
  for (auto [a, b] : ds) rows.push_back(a.values_string() + " " + b.values_string());
  EXPECT_EQ(rows, (std::vector<std::string>{"[1. 2.] 10", "[3. 4.] 20", "[5. 6.] 30"}));
  // A second pass starts over.
  int n = 0;
  for (auto& element : ds) n += std::get<1>(element).item<int>();
  EXPECT_EQ(n, 60);
}

TEST(DataTest, FromTensorSlicesOfAVector) {
  auto ds =
      data::from_tensor_slices(std::vector<Tensor>{ag::constant({1, 2}), ag::constant({3, 4})});
  std::vector<int> sums;
  for (const std::vector<Tensor>& e : ds) sums.push_back(e[0].item<int>() + e[1].item<int>());
  EXPECT_EQ(sums, (std::vector<int>{4, 6}));
}

TEST(DataTest, BatchKeepsOrDropsTheRemainder) {
  std::vector<std::string> batches;
  for (const Tensor& b : data::range(7).batch(3)) batches.push_back(b.values_string());
  EXPECT_EQ(batches, (std::vector<std::string>{"[0 1 2]", "[3 4 5]", "[6]"}));
  EXPECT_EQ(data::range(7).batch(3).element_spec()[0].shape.to_string(), "(None,)");
  batches.clear();
  for (const Tensor& b : data::range(7).batch(3, true)) batches.push_back(b.values_string());
  EXPECT_EQ(batches, (std::vector<std::string>{"[0 1 2]", "[3 4 5]"}));
  EXPECT_EQ(data::range(7).batch(3, true).element_spec()[0].shape.to_string(), "(3,)");
}

// TensorFlow's shuffle buffer, written out: fill, draw, refill the slot.
// The order of an iterator's `epoch`-th pass (its repetitions), `iterator`
// counting the iterators over the stage; a first pass seeds without epoch.
std::vector<int64_t> reference_shuffle(int64_t n, int64_t buffer_size, uint64_t seed,
                                       uint64_t iterator, uint64_t epoch = 0) {
  std::vector<uint32_t> words{uint32_t(seed), uint32_t(seed >> 32), uint32_t(iterator),
                              uint32_t(iterator >> 32)};
  if (epoch > 0) words.insert(words.end(), {uint32_t(epoch), uint32_t(epoch >> 32)});
  std::seed_seq seq(words.begin(), words.end());
  std::mt19937_64 engine(seq);
  std::vector<int64_t> buffer, out;
  int64_t next = 0;
  for (;;) {
    while (next < n && int64_t(buffer.size()) < buffer_size) buffer.push_back(next++);
    if (buffer.empty()) return out;
    size_t i = size_t(engine() % buffer.size());
    out.push_back(buffer[i]);
    buffer[i] = buffer.back();
    buffer.pop_back();
  }
}

TEST(DataTest, ShuffleIsSeededAndReshufflesEachPass) {
  auto ds = data::range(20).shuffle(5, 42);
  std::vector<int64_t> first = scalars(ds), second = scalars(ds);
  EXPECT_EQ(first, reference_shuffle(20, 5, 42, 0));
  EXPECT_EQ(second, reference_shuffle(20, 5, 42, 1));
  EXPECT_NE(first, second);
  std::vector<int64_t> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota(20));
  // The same seed on a new dataset gives the same orders.
  EXPECT_EQ(scalars(data::range(20).shuffle(5, 42)), first);
  auto fixed = data::range(20).shuffle(5, 42, /*reshuffle_each_iteration=*/false);
  EXPECT_EQ(scalars(fixed), scalars(fixed));
  // A buffer of 1 keeps the order.
  EXPECT_EQ(scalars(data::range(6).shuffle(1, 3)), iota(6));
}

// Each iterator draws its index when it starts; its repetitions' orders
// follow from that index and its own epochs, whatever other iterators did.
TEST(DataTest, ShuffleRepetitionsFollowTheIteratorsOwnEpochs) {
  auto ds = data::range(8).shuffle(4, 5).repeat(3);
  auto concat = [](std::vector<std::vector<int64_t>> parts) {
    std::vector<int64_t> out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
  };
  const auto of_iterator = [&](uint64_t i) {
    return concat({reference_shuffle(8, 4, 5, i, 0), reference_shuffle(8, 4, 5, i, 1),
                   reference_shuffle(8, 4, 5, i, 2)});
  };
  auto it = ds.begin();
  std::vector<int64_t> got;
  for (int k = 0; k < 10; ++k, ++it) got.push_back((*it).item<int64_t>());
  // Two iterators made while the first is in its second repetition.
  EXPECT_EQ(scalars(ds), of_iterator(1));
  EXPECT_EQ(scalars(ds), of_iterator(2));
  for (; it != ds.end(); ++it) got.push_back((*it).item<int64_t>());
  EXPECT_EQ(got, of_iterator(0));
  EXPECT_NE(reference_shuffle(8, 4, 5, 0, 1), reference_shuffle(8, 4, 5, 1, 0));
}

TEST(DataTest, MapIsTracedOnceAndRunPerElement) {
  int traces = 0;
  auto ds =
      data::from_tensor_slices(std::tuple{ag::constant({1.0, 2.0, 3.0}), ag::constant({1, 2, 3})})
          .map([&traces](Tensor x, Tensor y) {
            ++traces;
            return std::tuple{x * 2.0, ag::cast(y, ag::float32) + x};
          });
  EXPECT_EQ(traces, 1);
  EXPECT_EQ(ds.element_spec()[1].to_string(), "TensorSpec(shape=(), dtype=float32)");
  std::vector<std::string> out;
  for (auto [a, b] : ds) out.push_back(a.values_string() + "," + b.values_string());
  for (auto [a, b] : ds) out.push_back(a.values_string() + "," + b.values_string());
  EXPECT_EQ(out, (std::vector<std::string>{"2.,2.", "4.,4.", "6.,6.", "2.,2.", "4.,4.", "6.,6."}));
  EXPECT_EQ(traces, 1);
}

TEST(DataTest, FilterTakesATensorOrBoolPredicate) {
  auto even = data::range(10).filter(
      [](Tensor x) { return ag::equal(ag::mod(x, int64_t{2}), int64_t{0}); });
  EXPECT_EQ(scalars(even), (std::vector<int64_t>{0, 2, 4, 6, 8}));
  auto big = data::range(10).filter([](Tensor x) { return x.item<int64_t>() > 6; });
  EXPECT_EQ(scalars(big), (std::vector<int64_t>{7, 8, 9}));
  EXPECT_CONTAINS(
      error_of([] { (void)data::range(3).filter([](Tensor x) { return x; }); }),
      "filter: the predicate must return a scalar bool tensor, not TensorSpec(shape=(), "
      "dtype=int64)");
}

TEST(DataTest, RepeatTakeSkipShard) {
  EXPECT_EQ(scalars(data::range(3).repeat(2)), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(scalars(data::range(3).repeat().take(7)), (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(scalars(data::range(3).take(5)), iota(3));
  EXPECT_EQ(scalars(data::range(3).take(0)), std::vector<int64_t>{});
  EXPECT_EQ(scalars(data::range(5).skip(2)), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(scalars(data::range(10).shard(3, 1)), (std::vector<int64_t>{1, 4, 7}));
  EXPECT_EQ(scalars(data::range(10).shard(3, 0)), (std::vector<int64_t>{0, 3, 6, 9}));
  // An empty dataset repeated forever is empty, not an endless loop.
  EXPECT_EQ(scalars(data::range(0).repeat()), std::vector<int64_t>{});
  EXPECT_CONTAINS(error_of([] { (void)data::range(10).shard(3, 3); }),
                  "shard: index 3 is not in [0, 3)");
}

TEST(DataTest, ZipAndEnumerate) {
  std::vector<std::string> out;
  for (auto [a, b] : data::zip(data::range(3), data::range(10, 20)))
    out.push_back(a.values_string() + ":" + b.values_string());
  EXPECT_EQ(out, (std::vector<std::string>{"0:10", "1:11", "2:12"}));
  out.clear();
  for (auto [i, x] : data::range(5, 8).enumerate(1))
    out.push_back(i.values_string() + ":" + x.values_string());
  EXPECT_EQ(out, (std::vector<std::string>{"1:5", "2:6", "3:7"}));
}

TEST(DataTest, FromGeneratorRestartsEachPassAndChecksItsSignature) {
  auto ds = data::from_generator(
      [i = 0]() mutable -> std::optional<Tensor> {
        if (i == 4) return std::nullopt;
        const int k = i++;
        return ag::fill({k + 1}, k);
      },
      {ag::TensorSpec({ag::kUnknownDim}, ag::float32)});
  std::vector<std::string> out;
  for (const Tensor& t : ds) out.push_back(t.values_string());
  EXPECT_EQ(out, (std::vector<std::string>{"[0.]", "[1. 1.]", "[2. 2. 2.]", "[3. 3. 3. 3.]"}));
  EXPECT_EQ(scalars(ds.map([](Tensor t) { return ag::cast(ag::reduce_sum(t), ag::int64); })),
            (std::vector<int64_t>{0, 2, 6, 12}));

  int line = __LINE__ + 1;
  auto bad = data::from_generator(
      [i = 0]() mutable -> std::optional<Tensor> {
        if (i == 3) return std::nullopt;
        return i++ < 2 ? ag::constant({1.0, 2.0}) : ag::constant({1, 2});
      },
      {ag::TensorSpec({2}, ag::float32)});
  std::string message =
      error_of([&] { (void)scalars(bad.map([](Tensor t) { return ag::cast(t[0], ag::int64); })); });
  EXPECT_CONTAINS(message, "data_test.cpp:" + std::to_string(line) +
                               ": from_generator: element 2 does not match the output signature: "
                               "component 0 is int32 of shape (2,), the signature says float32 "
                               "of shape (2,)");
}

TEST(DataTest, PrefetchGivesTheSameElementsUnderLoad) {
  auto base = data::range(200).map(
      [](Tensor x) { return ag::reduce_sum(ag::fill({64}, 1.0f)) + ag::cast(x, ag::float32); });
  std::vector<float> plain, prefetched;
  for (const Tensor& t : base) plain.push_back(t.item<float>());
  for (int round = 0; round < 3; ++round) {
    prefetched.clear();
    for (const Tensor& t : base.prefetch(4)) prefetched.push_back(t.item<float>());
    EXPECT_EQ(prefetched, plain);
  }
  // A pass ended early stops and joins its thread.
  int seen = 0;
  for (const Tensor& t : base.prefetch(2)) {
    (void)t;
    if (++seen == 3) break;
  }
  EXPECT_EQ(seen, 3);
  // An error of the pipeline reaches the consumer after the elements before it.
  auto failing = data::from_generator(
      [i = 0]() mutable -> std::optional<Tensor> {
        if (i == 2) throw ag::InvalidArgumentError("generator broke");
        return Tensor(i++);
      },
      {ag::TensorSpec({}, ag::int32)});
  int got = 0;
  std::string message = error_of([&] {
    for (const Tensor& t : failing.prefetch(8)) got += 1 + t.item<int>() * 0;
  });
  EXPECT_EQ(got, 2);
  EXPECT_CONTAINS(message, "generator broke");
}

// ---- The staged loop, in the form agc emits ----------------------------------

// sum of x * y over the elements, stopping after a total above `limit`,
// skipping elements whose y is 2.
Tensor weighted_sum(const data::Dataset<std::tuple<Tensor, Tensor>>& ds, Tensor limit) {
  Tensor total = ag::constant(0.0f);
  Tensor agc_break_1 = ag::constant(false);
  ag::for_stmt(
      ds, [&] { return ag::not_(agc_break_1); },
      [&](auto agc_element) {
        auto [x, y] = agc_element;
        Tensor agc_continue_1 = ag::constant(false);
        ag::if_stmt(
            ag::equal(y, 2), [&] { agc_continue_1 = ag::constant(true); }, [&] {},
            ag::state({"agc_continue_1"}, agc_continue_1));
        ag::if_stmt(
            ag::not_(agc_continue_1),
            [&] {
              total = total + ag::reduce_sum(x) * ag::cast(y, ag::float32);
              ag::if_stmt(
                  total > limit, [&] { agc_break_1 = ag::constant(true); }, [&] {},
                  ag::state({"agc_break_1"}, agc_break_1));
            },
            [&] {}, ag::state({"total", "agc_break_1"}, total, agc_break_1));
      },
      ag::state({"total", "agc_break_1"}, total, agc_break_1));
  return total;
}

// Rows (i, 1, ..., 1) of `width` and labels i % 4.
data::Dataset<std::tuple<Tensor, Tensor>> pairs(int64_t n, int64_t width = 2) {
  std::vector<float> xs;
  std::vector<int> ys;
  for (int64_t i = 0; i < n; ++i) {
    xs.push_back(float(i));
    for (int64_t j = 1; j < width; ++j) xs.push_back(1.0f);
    ys.push_back(int(i % 4));
  }
  return data::from_tensor_slices(
      std::tuple{ag::constant(xs, ag::Shape{n, width}), ag::constant(ys, ag::Shape{n})});
}

TEST(DataTest, StagedLoopMatchesEagerWithBreakAndContinue) {
  auto f = ag::function(weighted_sum);
  for (float limit : {1000.0f, 20.0f}) {
    for (int64_t n : {3, 10}) {
      auto ds = pairs(n);
      Tensor eager = weighted_sum(ds, ag::constant(limit));
      Tensor staged = f(ds, ag::constant(limit));
      EXPECT_EQ(staged.values_string(), eager.values_string()) << n << " " << limit;
      // A second run of the graph starts a new pass.
      EXPECT_EQ(f(ds, ag::constant(limit)).values_string(), eager.values_string());
    }
  }
  // Element i adds (i + 1) * (i % 4), except where i % 4 == 2: 2 + 12 + 6 + 24 + 10
  // = 54 for 10 elements; with a limit of 20 the loop breaks after i = 7, at 44.
  EXPECT_EQ(weighted_sum(pairs(10), ag::constant(1000.0f)).values_string(), "54.");
  EXPECT_EQ(weighted_sum(pairs(10), ag::constant(20.0f)).values_string(), "44.");
}

TEST(DataTest, StagedLoopGraphSizeDoesNotDependOnTheData) {
  auto f = ag::function(weighted_sum);
  auto small = f.get_concrete_function(pairs(3), ag::TensorSpec({}, ag::float32));
  auto big = f.get_concrete_function(pairs(10, 3), ag::TensorSpec({}, ag::float32));
  EXPECT_EQ(small.graph().num_nodes(), big.graph().num_nodes());
  std::vector<std::string> ops = small.graph().ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "While"), 1);
  // Two element specs, two traces; the concrete function runs on any dataset
  // of its spec (the graph pulls from the call's).
  EXPECT_EQ(f.tracing_count(), 2);
  EXPECT_EQ(small(pairs(10), ag::constant(1000.0f)).values_string(), "54.");
}

// A dataset's trace type is its element_spec, as tf.function's: datasets of
// one spec share a trace (and no retrace warning comes), another spec traces
// anew, and each call's graph pulls from that call's dataset.
TEST(DataTest, DatasetsOfOneElementSpecShareATrace) {
  std::vector<std::string> warnings;
  ag::set_log_hook([&](ag::LogLevel level, const std::string& message) {
    if (level == ag::LogLevel::Warning) warnings.push_back(message);
  });
  auto f = ag::function(weighted_sum);
  for (int64_t n = 3; n < 11; ++n) {  // 8 datasets: more calls than the warning's 5 traces
    auto ds = pairs(n);
    EXPECT_EQ(f(ds, ag::constant(1000.0f)).values_string(),
              weighted_sum(ds, ag::constant(1000.0f)).values_string())
        << n;
  }
  EXPECT_EQ(f.tracing_count(), 1);
  auto wide = data::from_tensor_slices(std::tuple{ag::ones({4, 3}), ag::constant({1, 1, 1, 1})});
  EXPECT_EQ(f(wide, ag::constant(1000.0f)).values_string(), "12.");
  EXPECT_EQ(f.tracing_count(), 2);
  ag::set_log_hook(nullptr);
  EXPECT_EQ(warnings, std::vector<std::string>{});
  // The trace type: the element type and spec (and the handle, an input).
  EXPECT_CONTAINS(f.pretty_printed_concrete_signatures(),
                  "Struct[TensorSpec(shape=(), dtype=int64), "
                  "Literal['Dataset<std::tuple<ag::Tensor, ag::Tensor>>(TensorSpec(shape=(3,), "
                  "dtype=float32), TensorSpec(shape=(), dtype=int32))']]");
}

// zip(ds.map(x * 10), ds.skip(1)).batch(2): a - b summed over the batches.
Tensor scaled_minus_next(const data::Dataset<Tensor>& ds) {
  auto batched = data::zip(ds.map([](Tensor x) { return x * 10.0f; }), ds.skip(1)).batch(2);
  Tensor total = ag::constant(0.0f);
  ag::for_stmt(
      batched, ag::no_extra_test,
      [&](std::tuple<Tensor, Tensor> e) {
        total = total + ag::reduce_sum(std::get<0>(e)) - ag::reduce_sum(std::get<1>(e));
      },
      ag::state({"total"}, total));
  return total;
}

TEST(DataTest, TransformationsOfADatasetArgumentApplyToEachCallsDataset) {
  auto f = ag::function(scaled_minus_next);
  auto five = data::from_tensor_slices(ag::constant({1.0f, 2.0f, 3.0f, 4.0f, 5.0f}));
  auto three = data::from_tensor_slices(ag::constant({10.0f, 20.0f, 30.0f}));
  // (10 + 20 + 30 + 40) - (2 + 3 + 4 + 5), then (100 + 200) - (20 + 30).
  EXPECT_EQ(scaled_minus_next(five).values_string(), "86.");
  EXPECT_EQ(scaled_minus_next(three).values_string(), "250.");
  EXPECT_EQ(f(five).values_string(), "86.");
  EXPECT_EQ(f(three).values_string(), "250.");
  EXPECT_EQ(f(five).values_string(), "86.");
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(DataTest, TwoThreadsRunOneTraceOverTwoDatasetsOfOneSpec) {
  auto f = ag::function(scaled_minus_next);
  auto five = data::from_tensor_slices(ag::constant({1.0f, 2.0f, 3.0f, 4.0f, 5.0f}));
  auto three = data::from_tensor_slices(ag::constant({10.0f, 20.0f, 30.0f}));
  (void)f(five);  // traced once, here
  std::vector<std::string> results(2);
  auto run = [&](const data::Dataset<Tensor>& ds, std::string& out) {
    for (int i = 0; i < 200; ++i) {
      std::string value = f(ds).values_string();
      if (i == 0 || value != out) out += value;
    }
  };
  std::thread a(run, std::cref(five), std::ref(results[0]));
  std::thread b(run, std::cref(three), std::ref(results[1]));
  a.join();
  b.join();
  EXPECT_EQ(results, (std::vector<std::string>{"86.", "250."}));
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(DataTest, ACppLoopOverADatasetArgumentWhileTracingIsAnError) {
  auto f = ag::function([](const data::Dataset<Tensor>& ds) {
    Tensor total = ag::constant(0.0f);
    for (const Tensor& x : ds) total = total + x;
    return total;
  });
  EXPECT_EQ(error_of([&] { (void)f(data::from_tensor_slices(ag::constant({1.0f, 2.0f}))); }),
            "FailedPreconditionError: ag::data: a Dataset argument of the function being traced "
            "is iterated by a C++ loop; the trace would hold the first call's elements, and the "
            "next dataset of the same element_spec would reuse it. Mark the function "
            "AG_FUNCTION, so that agc stages the loop (or write ag::for_stmt), or iterate the "
            "dataset outside the traced function");
}

Tensor mean_of_batches(const data::Dataset<Tensor>& ds) {
  Tensor total = ag::constant(0.0f);
  Tensor count = ag::constant(0.0f);
  ag::for_stmt(
      ds, ag::no_extra_test,
      [&](Tensor batch) {
        total = total + ag::reduce_sum(batch);
        count = count + ag::cast(ag::size(batch), ag::float32);
      },
      ag::state({"total", "count"}, total, count));
  return total / count;
}

TEST(DataTest, StagedLoopOverAShuffledMappedBatchedPipeline) {
  auto ds = data::range(11)
                .map([](Tensor x) { return ag::cast(x, ag::float32) * 2.0f; })
                .shuffle(4, 9)
                .batch(3)
                .prefetch(2);
  auto f = ag::function(mean_of_batches);
  EXPECT_EQ(f(ds).values_string(), "10.");
  EXPECT_EQ(mean_of_batches(ds).values_string(), "10.");
  EXPECT_EQ(f(ds).values_string(), "10.");
}

Tensor sum_generated(const data::Dataset<Tensor>& ds) {
  Tensor total = ag::constant(0.0f);
  ag::for_stmt(
      ds, ag::no_extra_test, [&](Tensor x) { total = total + ag::reduce_sum(x); },
      ag::state({"total"}, total));
  return total;
}

TEST(DataTest, StagedLoopReportsABadElementAtTheGeneratorsLine) {
  int line = __LINE__ + 1;
  auto ds = data::from_generator(
      [i = 0]() mutable -> std::optional<Tensor> {
        if (i == 3) return std::nullopt;
        return i++ == 1 ? ag::constant({1.0, 2.0, 3.0}) : ag::constant({1.0, 2.0});
      },
      {ag::TensorSpec({2}, ag::float32)});
  std::string expected = "data_test.cpp:" + std::to_string(line) +
                         ": from_generator: element 1 does not match the output signature: "
                         "component 0 is float32 of shape (3,), the signature says float32 of "
                         "shape (2,)";
  EXPECT_CONTAINS(error_of([&] { (void)sum_generated(ds); }), expected);
  EXPECT_CONTAINS(error_of([&] { (void)ag::function(sum_generated)(ds); }), expected);
}

}  // namespace

// ---- Files ---------------------------------------------------------------------

std::string write_file(const std::string& name, const std::string& text) {
  std::string path = testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::vector<std::string> rows_of(const data::Dataset<std::vector<Tensor>>& ds) {
  std::vector<std::string> rows;
  for (const std::vector<Tensor>& row : ds) {
    std::string text;
    for (const Tensor& t : row) text += (text.empty() ? "" : "|") + t.values_string();
    rows.push_back(text);
  }
  return rows;
}

TEST(DataTest, CsvDatasetParsesTypesAndQuotes) {
  std::string path = write_file("data_test_ok.csv",
                                "x,label,note\n"
                                "1.5,3,plain\n"
                                "\"-2\",4,\"with, comma\"\n"
                                "0.25,\"5\",\"say \"\"hi\"\"\nacross lines\"\n");
  auto ds = data::CsvDataset(path, {ag::float32, ag::int64, ag::int32},
                             {.header = true, .delimiter = ','});
  // The third column holds text: an error as int32, the bytes as string.
  EXPECT_CONTAINS(error_of([&] { (void)rows_of(ds); }),
                  "data_test_ok.csv:2: field 3 \"plain\" is not a valid int32");
  EXPECT_EQ(rows_of(data::CsvDataset(path, {ag::float32, ag::int64, ag::string})),
            (std::vector<std::string>{"1.5|3|b'plain'", "-2.|4|b'with, comma'",
                                      "0.25|5|b'say \"hi\"\\nacross lines'"}));
  std::string numbers = write_file("data_test_numbers.csv", "a;b\n1.5;3\n\"-2\";\"4\"\n\n");
  EXPECT_EQ(rows_of(data::CsvDataset(numbers, {ag::float32, ag::int64}, {.delimiter = ';'})),
            (std::vector<std::string>{"1.5|3", "-2.|4"}));
  std::string quoted = write_file("data_test_quoted.csv", "1,\"a \"\"b\"\",\nc\",2\n");
  auto three = data::CsvDataset(quoted, {ag::int32, ag::int32, ag::int32}, {.header = false});
  EXPECT_CONTAINS(error_of([&] { (void)rows_of(three); }),
                  "data_test_quoted.csv:1: field 2 \"a \"b\",\nc\" is not a valid int32");
}

// The bits of a scalar's single element.
template <class T>
T bits_of(const Tensor& t) {
  EXPECT_EQ(t.num_elements(), 1);
  T v{};
  std::memcpy(&v, t.raw_data(), sizeof v);
  return v;
}

TEST(DataTest, CsvDatasetReadsEveryDtype) {
  std::string path = write_file("data_test_dtypes.csv",
                                "i8,u8,i16,u16,u32,u64,f16,bf16,b,s\n"
                                "-128,255,-32768,65535,4294967295,18446744073709551615,0.1,1.5,"
                                "true,\n"
                                "127,-0,32767,0,0,9007199254740993,-65504,-3e38,0,\"a,\"\"b\"\n");
  auto ds = data::CsvDataset(path, {ag::int8, ag::uint8, ag::int16, ag::uint16, ag::uint32,
                                    ag::uint64, ag::float16, ag::bfloat16, ag::bool_, ag::string});
  std::vector<std::vector<Tensor>> rows;
  for (const std::vector<Tensor>& row : ds) rows.push_back(row);
  ASSERT_EQ(rows.size(), 2u);
  const std::vector<Tensor>& a = rows[0];
  const std::vector<Tensor>& b = rows[1];
  for (size_t c = 0; c < a.size(); ++c) {
    EXPECT_EQ(a[c].dtype(), ds.element_spec()[c].dtype) << c;
    EXPECT_EQ(a[c].shape(), ag::Shape{}) << c;
  }
  EXPECT_EQ(bits_of<int8_t>(a[0]), -128);
  EXPECT_EQ(bits_of<int8_t>(b[0]), 127);
  EXPECT_EQ(bits_of<uint8_t>(a[1]), 255);
  EXPECT_EQ(bits_of<uint8_t>(b[1]), 0);
  EXPECT_EQ(bits_of<int16_t>(a[2]), -32768);
  EXPECT_EQ(bits_of<uint16_t>(a[3]), 65535);
  EXPECT_EQ(bits_of<uint32_t>(a[4]), 4294967295u);
  EXPECT_EQ(bits_of<uint64_t>(a[5]), 18446744073709551615ull);
  EXPECT_EQ(bits_of<uint64_t>(b[5]), 9007199254740993ull);  // not a double's value
  EXPECT_EQ(bits_of<uint16_t>(a[6]), ag::float16_t(0.1).bits);
  EXPECT_EQ(bits_of<uint16_t>(b[6]), ag::float16_t(-65504.0).bits);
  EXPECT_EQ(bits_of<uint16_t>(a[7]), ag::bfloat16_t(1.5).bits);
  EXPECT_EQ(bits_of<uint16_t>(b[7]), ag::bfloat16_t(-3e38).bits);
  EXPECT_TRUE(a[8].item<bool>());
  EXPECT_FALSE(b[8].item<bool>());
  EXPECT_EQ(ag::strings::item(a[9]), "");
  EXPECT_EQ(ag::strings::item(b[9]), "a,\"b");
}

TEST(DataTest, CsvDatasetNamesAFieldOutOfItsDtypesRange) {
  auto error_for = [](const std::string& field, ag::DType dtype) {
    std::string path = write_file("data_test_range.csv", "x,y\n1," + field + "\n");
    return error_of([&] { (void)rows_of(data::CsvDataset(path, {ag::int32, dtype})); });
  };
  const std::string at =
      "InvalidArgumentError: " + testing::TempDir() + "data_test_range.csv:2: field 2 ";
  EXPECT_EQ(error_for("300", ag::uint8), at + "\"300\" is out of the range [0, 255] of uint8");
  EXPECT_EQ(error_for("-129", ag::int8), at + "\"-129\" is out of the range [-128, 127] of int8");
  EXPECT_EQ(error_for("-1", ag::uint32),
            at + "\"-1\" is out of the range [0, 4294967295] of uint32");
  EXPECT_EQ(error_for("18446744073709551616", ag::uint64),
            at + "\"18446744073709551616\" is out of the range [0, 18446744073709551615] of "
                 "uint64");
  EXPECT_EQ(error_for("3000000000", ag::int32),
            at + "\"3000000000\" is out of the range [-2147483648, 2147483647] of int32");
  EXPECT_EQ(error_for("70000", ag::float16), at + "\"70000\" is out of the range of float16");
  EXPECT_EQ(error_for("1e39", ag::float32), at + "\"1e39\" is out of the range of float32");
  EXPECT_EQ(error_for("1e400", ag::float64), at + "\"1e400\" is out of the range of float64");
  EXPECT_EQ(error_for("4x", ag::int16), at + "\"4x\" is not a valid int16");
  EXPECT_EQ(error_for("", ag::bfloat16), at + "\"\" is not a valid bfloat16");
  // Infinity written out is a value, not an overflow.
  std::string inf = write_file("data_test_inf.csv", "x\ninf\n");
  EXPECT_EQ(rows_of(data::CsvDataset(inf, {ag::float16})).size(), 1u);
}

TEST(DataTest, CsvDatasetErrorsNameFileAndLine) {
  std::string path = write_file("data_test_bad.csv", "a,b\n1,2\n3\n");
  EXPECT_CONTAINS(error_of([&] { (void)rows_of(data::CsvDataset(path, {ag::int32, ag::int32})); }),
                  "data_test_bad.csv:3: expected 2 fields, found 1");
  std::string open = write_file("data_test_open.csv", "a\n\"1\n");
  EXPECT_CONTAINS(error_of([&] { (void)rows_of(data::CsvDataset(open, {ag::int32})); }),
                  "data_test_open.csv:2: a quoted field is not closed before the end of the file");
  int line = __LINE__ + 1;
  std::string missing = error_of([] { (void)data::CsvDataset("/nonexistent/x.csv", {ag::int32}); });
  EXPECT_CONTAINS(missing, "data_test.cpp:" + std::to_string(line) +
                               ": CsvDataset: cannot open '/nonexistent/x.csv'");
  EXPECT_CONTAINS(missing, "NotFoundError");
}

TEST(DataTest, RecordFilesRoundTripAndReportDamage) {
  std::string path = testing::TempDir() + "data_test.records";
  {
    data::RecordWriter writer(path);
    for (int i = 0; i < 3; ++i)
      writer.write({ag::constant({float(i), float(i) / 2}), Tensor(int64_t{i * 10})});
  }
  std::vector<ag::TensorSpec> spec = {ag::TensorSpec({2}, ag::float32),
                                      ag::TensorSpec({}, ag::int64)};
  EXPECT_EQ(rows_of(data::RecordDataset(path, spec)),
            (std::vector<std::string>{"[0. 0.]|0", "[1. 0.5]|10", "[2. 1.]|20"}));

  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  // Each record: 12 bytes of header, 4 + 2 * (2 + dims) + values, 4 of footer.
  const size_t record = 12 + (4 + (2 + 8 + 8) + (2 + 4)) + 4 + 4;
  ASSERT_EQ(bytes.size(), 3 * record);
  std::string flipped = bytes;
  flipped[record + 20] ^= 1;  // in the second record's data
  std::string damaged = write_file("data_test_flipped.records", flipped);
  std::string message = error_of([&] { (void)rows_of(data::RecordDataset(damaged, spec)); });
  EXPECT_CONTAINS(message, "DataLossError");
  EXPECT_CONTAINS(message, "data_test_flipped.records: corrupted record at offset " +
                               std::to_string(record) + ": the data's checksum does not match");
  std::string cut = write_file("data_test_cut.records", bytes.substr(0, 2 * record + 30));
  EXPECT_CONTAINS(error_of([&] { (void)rows_of(data::RecordDataset(cut, spec)); }),
                  "data_test_cut.records: corrupted record at offset " +
                      std::to_string(2 * record) + ": its length");
  std::string bad_length = bytes;
  bad_length[0] ^= 4;
  std::string length_file = write_file("data_test_length.records", bad_length);
  EXPECT_CONTAINS(error_of([&] { (void)rows_of(data::RecordDataset(length_file, spec)); }),
                  "corrupted record at offset 0: the length's checksum does not match");
  std::string wrong_spec = error_of(
      [&] { (void)rows_of(data::RecordDataset(path, {ag::TensorSpec({3}, ag::float32)})); });
  EXPECT_CONTAINS(wrong_spec, "the element has 2 tensors, the element spec 1");
}
