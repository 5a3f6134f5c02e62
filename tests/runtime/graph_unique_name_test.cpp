// graph::Body::unique_name: the names the tracer gives nodes ("add", "add_1")
// stay unique however bases and numbered names mix.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "graph/graph.h"

namespace {

using ag::graph::Body;

TEST(GraphUniqueName, NumbersRepeatedBases) {
  Body body;
  EXPECT_EQ(body.unique_name("add"), "add");
  EXPECT_EQ(body.unique_name("add"), "add_1");
  EXPECT_EQ(body.unique_name("add"), "add_2");
  EXPECT_EQ(body.unique_name("mul"), "mul");
}

TEST(GraphUniqueName, ABaseThatIsAnotherBasesNumberedName) {
  Body body;
  body.unique_name("add");
  EXPECT_EQ(body.unique_name("add"), "add_1");
  // "add_1" is taken as add's numbered name.
  EXPECT_EQ(body.unique_name("add_1"), "add_1_1");
  EXPECT_EQ(body.unique_name("add_1"), "add_1_2");
  // "add_2" is not taken yet.
  EXPECT_EQ(body.unique_name("add_2"), "add_2");
  // So add skips it.
  EXPECT_EQ(body.unique_name("add"), "add_3");
}

TEST(GraphUniqueName, NamesWithUnderscoresAndZeros) {
  Body body;
  EXPECT_EQ(body.unique_name("x_0"), "x_0");
  EXPECT_EQ(body.unique_name("x"), "x");
  EXPECT_EQ(body.unique_name("x"), "x_1");
  EXPECT_EQ(body.unique_name("x_01"), "x_01");
  EXPECT_EQ(body.unique_name("x_"), "x_");
  EXPECT_EQ(body.unique_name("x_"), "x__1");
  EXPECT_EQ(body.unique_name("_1"), "_1");
}

TEST(GraphUniqueName, ManyMixedNamesAreDistinct) {
  Body body;
  std::set<std::string> seen;
  for (int i = 0; i < 300; ++i) {
    for (const char* base : {"add", "add_1", "add_7", "Const", "a_2_3", "add_12"}) {
      std::string name = body.unique_name(base);
      EXPECT_TRUE(seen.insert(name).second) << name;
    }
  }
}

}  // namespace
