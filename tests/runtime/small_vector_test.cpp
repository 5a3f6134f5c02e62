// graph::SmallVector: a node's inputs and output types, inline up to N and on
// the heap beyond, behave like the std::vector they replace.
#include <gtest/gtest.h>

#include <vector>

#include "graph/graph.h"
#include "graph/small_vector.h"

namespace {

using ag::graph::SmallVector;
using ag::graph::ValueRef;

std::vector<int> items(const SmallVector<int, 2>& v) {
  return {v.begin(), v.end()};
}

TEST(SmallVector, GrowsPastItsInlineCapacityKeepingTheElements) {
  SmallVector<int, 2> v;
  EXPECT_TRUE(v.empty());
  for (int i = 0; i < 5; ++i) v.push_back(i * 10);
  EXPECT_EQ(items(v), (std::vector<int>{0, 10, 20, 30, 40}));
  EXPECT_GE(v.capacity(), 5u);
  EXPECT_EQ(v.front(), 0);
  EXPECT_EQ(v.back(), 40);
}

TEST(SmallVector, PushingAnElementOfItselfWhileGrowing) {
  SmallVector<int, 2> v = {7, 8};
  v.push_back(v[0]);  // the reference points into the block being replaced
  EXPECT_EQ(items(v), (std::vector<int>{7, 8, 7}));
}

TEST(SmallVector, CopiesAndMovesInlineAndHeapContents) {
  for (int count : {2, 6}) {
    SmallVector<int, 2> source;
    for (int i = 0; i < count; ++i) source.push_back(i + 1);
    SmallVector<int, 2> copy = source;
    EXPECT_EQ(copy, source);
    copy[0] = 99;
    EXPECT_EQ(source[0], 1) << "a copy owns its elements";
    SmallVector<int, 2> moved = std::move(source);
    EXPECT_EQ(moved.size(), size_t(count));
    EXPECT_EQ(moved.back(), count);
    EXPECT_TRUE(source.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    source = moved;
    EXPECT_EQ(source, moved);
    moved = SmallVector<int, 2>{5};
    EXPECT_EQ(items(moved), (std::vector<int>{5}));
  }
}

TEST(SmallVector, InsertsEraseAndResizeLikeAVector) {
  SmallVector<int, 2> v = {1, 4};
  const std::vector<int> middle = {2, 3};
  v.insert(v.begin() + 1, middle.begin(), middle.end());
  EXPECT_EQ(items(v), (std::vector<int>{1, 2, 3, 4}));
  v.insert(v.end(), v.begin(), v.begin() + 2);  // a range of itself
  EXPECT_EQ(items(v), (std::vector<int>{1, 2, 3, 4, 1, 2}));
  v.erase(v.begin() + 1, v.begin() + 3);
  EXPECT_EQ(items(v), (std::vector<int>{1, 4, 1, 2}));
  v.erase(v.begin());
  EXPECT_EQ(items(v), (std::vector<int>{4, 1, 2}));
  v.resize(5, 9);
  EXPECT_EQ(items(v), (std::vector<int>{4, 1, 2, 9, 9}));
  v.resize(1);
  EXPECT_EQ(items(v), (std::vector<int>{4}));
  v.clear();
  EXPECT_TRUE(v.empty());
}

TEST(SmallVector, AssignsFromAStdVectorAndComparesByElements) {
  const std::vector<ValueRef> values = {{1, 0}, {2, 1}, {3, 0}, {4, 2}};
  SmallVector<ValueRef, 3> v;
  v = values;
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[3], (ValueRef{4, 2}));
  SmallVector<ValueRef, 3> w(values.begin(), values.end());
  EXPECT_EQ(v, w);
  w.pop_back();
  EXPECT_FALSE(v == w);
}

}  // namespace
