// ag::train::Checkpoint of a Dataset iterator (tf.train.Checkpoint(iterator=it)):
// an iterator restored into a fresh pipeline gives, bit for bit, the elements
// the saved one went on to give, across shuffles reshuffled each repetition,
// maps, filters, zips, shards, batches and enumerate; a pipeline whose state
// cannot be saved is an error naming the stage, and a file that does not fit
// leaves the iterator where it was.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <ag/ag.h>
#include <ag/checkpoint.h>

#include "error_test_util.h"
#include "temp_dir_test.h"

namespace {

using ag::Tensor;
using ag::train::Checkpoint;
using ag_test::error_of;
namespace data = ag::data;

class CheckpointIteratorTest : public ag_test::TempDirTest {};

// 9 batches of (index, (a, b)): `a` a range shuffled anew each of its 3
// repetitions, `b` mapped and filtered rows of a matrix, repeated.
auto pipeline() {
  std::vector<float> values;
  for (int i = 0; i < 18; ++i) values.push_back(std::sin(float(i) * 1.7f) * 1.3f);
  auto a = data::range(0, 12).shuffle(5, /*seed=*/7).repeat(3);
  auto b = data::from_tensor_slices(ag::constant(values, ag::Shape{9, 2}))
               .map([](Tensor x) { return x * 2.0f; })
               .filter([](Tensor x) { return ag::reduce_max(x) > -1.5f; })
               .repeat();
  return data::zip(a, b).shard(2, 1).batch(2).enumerate().take(12);
}

template <class It, class D>
std::vector<std::vector<Tensor>> rest_of(It& it, const D& ds) {
  std::vector<std::vector<Tensor>> out;
  for (; it != ds.end(); ++it) out.push_back(data::detail::flatten(*it));
  return out;
}

bool same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].dtype() != b[i].dtype() || a[i].shape() != b[i].shape() ||
        std::memcmp(a[i].raw_data(), b[i].raw_data(),
                    size_t(a[i].num_elements()) * ag::dtype_size(a[i].dtype())) != 0)
      return false;
  }
  return true;
}

TEST_F(CheckpointIteratorTest, ARestoredIteratorGoesOnBitForBit) {
  auto ds = pipeline();
  for (const auto& e : ds) (void)e;  // a first pass: the second draws other shuffle orders
  auto it = ds.begin();
  for (int k = 0; k < 4; ++k) ++it;
  Checkpoint ckpt;
  ckpt.track("iterator", it);
  const std::string saved = ckpt.save(path("ckpt"));
  const std::vector<Tensor> current = data::detail::flatten(*it);
  const auto want = rest_of(it, ds);
  ASSERT_EQ(want.size(), 5u);  // elements 4 to 8 of 9
  EXPECT_EQ(want[0][0].item<int64_t>(), 4);

  auto fresh = pipeline();
  auto restored = fresh.begin();
  ++restored;
  Checkpoint other;
  other.track("iterator", restored);
  other.restore(saved);
  EXPECT_TRUE(same_bits(data::detail::flatten(*restored), current));
  const auto got = rest_of(restored, fresh);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(same_bits(got[i], want[i])) << i;

  // The second pass's shuffle orders are not the first's: the restored
  // iterator replayed the saved pass's, not a new pass's.
  auto first = pipeline();
  auto first_pass = first.begin();
  for (int k = 0; k < 4; ++k) ++first_pass;
  EXPECT_FALSE(same_bits(data::detail::flatten(*first_pass), current));
}

// Other iterators over the same dataset, made before the save, between save
// and restore, and before the restore, change neither the saved iterator's
// course nor the restored one's.
TEST_F(CheckpointIteratorTest, OtherIteratorsOnTheDatasetChangeNoOrder) {
  auto alone = pipeline();
  auto alone_it = alone.begin();
  for (int k = 0; k < 3; ++k) ++alone_it;
  const auto want = rest_of(alone_it, alone);
  ASSERT_EQ(want.size(), 6u);

  auto ds = pipeline();
  auto it = ds.begin();
  for (int k = 0; k < 3; ++k) ++it;
  auto early = ds.begin();
  ++early;
  Checkpoint ckpt;
  ckpt.track("iterator", it);
  const std::string saved = ckpt.save(path("ckpt"));
  for (int pass = 0; pass < 2; ++pass) {
    auto whole = ds.begin();
    EXPECT_EQ(rest_of(whole, ds).size(), 9u);
  }
  const auto uninterrupted = rest_of(it, ds);
  ASSERT_EQ(uninterrupted.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(same_bits(uninterrupted[i], want[i])) << i;

  auto fresh = pipeline();
  auto before = fresh.begin();
  for (int k = 0; k < 5; ++k) ++before;
  auto restored = fresh.begin();
  Checkpoint other;
  other.track("iterator", restored);
  other.restore(saved);
  auto after = fresh.begin();
  ++after;
  const auto got = rest_of(restored, fresh);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(same_bits(got[i], want[i])) << i;
}

TEST_F(CheckpointIteratorTest, AnIteratorAtTheEndStaysThere) {
  auto ds = data::range(3);
  auto it = ds.begin();
  for (int k = 0; k < 3; ++k) ++it;
  EXPECT_TRUE(it == ds.end());
  Checkpoint ckpt;
  ckpt.track("it", it);
  const std::string saved = ckpt.save(path("ckpt"));
  auto other = ds.begin();
  Checkpoint c2;
  c2.track("it", other);
  c2.restore(saved);
  EXPECT_TRUE(other == ds.end());
}

TEST_F(CheckpointIteratorTest, StagesWithoutASaveableStateAreNamedAtSave) {
  auto generated = data::from_generator(
                       [i = 0]() mutable -> std::optional<Tensor> {
                         if (i == 5) return std::nullopt;
                         return ag::constant(float(i++));
                       },
                       {ag::TensorSpec({}, ag::float32)})
                       .batch(2);
  auto it = generated.begin();
  Checkpoint ckpt;
  ckpt.track("it", it);
  EXPECT_EQ(error_of([&] { ckpt.save(path("ckpt")); }),
            "FailedPreconditionError: Checkpoint.save: iterator 'it': the position of an "
            "iterator over 'from_generator -> batch(2)' cannot be saved: its stage "
            "'from_generator' holds state a replay cannot rebuild (a generator's own state, the "
            "elements a prefetch thread has pulled ahead); checkpoint an iterator over a "
            "pipeline without it");
  EXPECT_EQ(ckpt.save_counter(), 0);
  EXPECT_FALSE(std::filesystem::exists(path("ckpt-1")));

  auto prefetched = data::range(10).prefetch(2);
  auto it2 = prefetched.begin();
  Checkpoint c2;
  c2.track("it", it2);
  EXPECT_CONTAINS(error_of([&] { c2.save(path("ckpt")); }), "its stage 'prefetch(2)' holds state");

  data::Dataset<Tensor>::iterator end;
  EXPECT_CONTAINS(error_of([&] { Checkpoint().track("end", end); }),
                  "InvalidArgumentError: Checkpoint.track('end'): the iterator is an end() "
                  "iterator, over no dataset");
}

TEST_F(CheckpointIteratorTest, AFileThatDoesNotFitLeavesTheIteratorWhereItWas) {
  auto ds = pipeline();
  auto it = ds.begin();
  for (int k = 0; k < 6; ++k) ++it;
  Checkpoint ckpt;
  ckpt.track("iterator", it);
  const std::string saved = ckpt.save(path("ckpt"));

  // Another pipeline.
  auto other = data::range(0, 13).batch(2);
  auto other_it = other.begin();
  ++other_it;
  Checkpoint c2;
  c2.track("iterator", other_it);
  EXPECT_CONTAINS(error_of([&] { c2.restore(saved); }),
                  "does not fit what this Checkpoint tracks; nothing was restored:\n  of another "
                  "type:\n    iterator 'iterator' was saved over 'zip(range(0, 12, 1) -> "
                  "shuffle(5, seed 7) -> repeat(3), from_tensor_slices(float32 (2,)) -> map -> "
                  "filter -> repeat(-1)) -> shard(2, 1) -> batch(2) -> enumerate(0) -> "
                  "take(12)', and iterates 'range(0, 13, 1) -> batch(2)' here");
  EXPECT_EQ((*other_it).to_vector<int64_t>(), (std::vector<int64_t>{2, 3}));

  // The same stages over fewer rows: the pipeline ends before the position.
  auto ten = data::from_tensor_slices(ag::zeros({10, 2}));
  auto ten_it = ten.begin();
  for (int k = 0; k < 6; ++k) ++ten_it;
  Checkpoint c3;
  c3.track("rows", ten_it);
  const std::string at_7 = c3.save(path("rows"));
  auto four = data::from_tensor_slices(ag::ones({4, 2}));
  auto four_it = four.begin();
  Checkpoint c4;
  c4.track("rows", four_it);
  EXPECT_EQ(error_of([&] { c4.restore(at_7); }),
            "InvalidArgumentError: checkpoint '" + at_7 +
                "': iterator 'rows' cannot be restored, nothing was: the pipeline "
                "'from_tensor_slices(float32 (2,))' ends after 4 elements, before the saved "
                "position 7 (was the iterator saved over other data?)");
  EXPECT_EQ((*four_it).to_vector<float>(), (std::vector<float>{1.0f, 1.0f}));
}

TEST_F(CheckpointIteratorTest, ADamagedFileLeavesTheIteratorWhereItWas) {
  auto ds = data::range(10);
  auto it = ds.begin();
  ++it;
  Checkpoint ckpt;
  ckpt.track("it", it);
  const std::string saved = ckpt.save(path("ckpt"));
  ++it;
  std::ifstream in(saved, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes[bytes.size() - 3] ^= 0x10;
  std::ofstream(path("damaged"), std::ios::binary) << bytes;
  EXPECT_CONTAINS(error_of([&] { ckpt.restore(path("damaged")); }),
                  "DataLossError: checkpoint '" + path("damaged") + "' is damaged");
  EXPECT_EQ((*it).item<int64_t>(), 2);
  ckpt.restore(saved);
  EXPECT_EQ((*it).item<int64_t>(), 1);
  ++it;
  EXPECT_EQ((*it).item<int64_t>(), 2);
}

}  // namespace
