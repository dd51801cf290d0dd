// OrderedDict, what state_dict() and load() return: insertion order, lookup by key, and the
// std::map conversions that keep older code compiling.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using Dict = OrderedDict<std::string, Tensor>;

std::vector<std::string> keys_by_iteration(const Dict& d) {
  std::vector<std::string> out;
  for (const auto& [key, value] : d) out.push_back(key);
  return out;
}

TEST(OrderedDict, IteratesInInsertionOrderNotAlphabetically) {
  Dict d;
  d.insert("fc2.weight", ones({2}));
  d.insert("fc1.weight", zeros({3}));
  d.insert("bias", full({1}, 7.f));
  const std::vector<std::string> expected{"fc2.weight", "fc1.weight", "bias"};
  EXPECT_EQ(d.keys(), expected);
  EXPECT_EQ(keys_by_iteration(d), expected);
  ASSERT_EQ(d.values().size(), 3u);
  EXPECT_EQ(testing::values(d.values()[2]), std::vector<double>{7});
  EXPECT_EQ(d.size(), 3u);
  EXPECT_FALSE(d.empty());
}

TEST(OrderedDict, LooksUpByKeyWithIndexAtFindContains) {
  Dict d{{"a", ones({2})}, {"b", zeros({1})}};
  EXPECT_EQ(testing::values(d["a"]), (std::vector<double>{1, 1}));
  EXPECT_EQ(testing::values(d.at("b")), std::vector<double>{0});
  EXPECT_TRUE(d.contains("a"));
  EXPECT_FALSE(d.contains("c"));
  EXPECT_EQ(d.count("b"), 1u);
  EXPECT_EQ(d.count("c"), 0u);
  ASSERT_NE(d.find("b"), d.end());
  EXPECT_EQ(d.find("b")->first, "b");
  EXPECT_EQ(d.find("c"), d.end());
  const Dict& c = d;
  EXPECT_EQ(c.find("c"), c.end());
  try {
    (void)c["missing.weight"];
    FAIL() << "no IndexError";
  } catch (const IndexError& e) {
    EXPECT_STREQ(e.what(), "OrderedDict: key 'missing.weight' is not defined");
  }
  EXPECT_THROW((void)d.at("missing"), IndexError);
  EXPECT_EQ(d.size(), 2u);  // the failed lookups added nothing
}

TEST(OrderedDict, AssignmentByIndexAppendsOrReplacesInPlace) {
  Dict d{{"x", ones({1})}, {"y", ones({1})}};
  d["x"] = zeros({1});   // replaced where it stands
  d["new"] = full({1}, 3.f);  // appended, as in Python
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"x", "y", "new"}));
  EXPECT_EQ(testing::values(d["x"]), std::vector<double>{0});
  d.insert_or_assign("y", full({1}, 5.f));
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"x", "y", "new"}));
  EXPECT_EQ(testing::values(d["y"]), std::vector<double>{5});
}

TEST(OrderedDict, DuplicateKeysAreAValueError) {
  Dict d{{"w", ones({1})}};
  try {
    d.insert("w", zeros({1}));
    FAIL() << "no ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "OrderedDict::insert: key 'w' is already defined");
  }
  EXPECT_EQ(testing::values(d["w"]), std::vector<double>{1});
  EXPECT_THROW((Dict{{"a", ones({1})}, {"a", ones({1})}}), ValueError);
}

TEST(OrderedDict, EraseKeepsTheOrderOfTheRest) {
  Dict d{{"c", ones({1})}, {"a", ones({1})}, {"b", ones({1})}};
  EXPECT_EQ(d.erase("a"), 1u);
  EXPECT_EQ(d.erase("a"), 0u);
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"c", "b"}));
  d.insert("a", zeros({1}));
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"c", "b", "a"}));
  d.clear();
  EXPECT_TRUE(d.empty());
  EXPECT_FALSE(d.contains("c"));
}

TEST(OrderedDict, CopiesAreIndependentAndKeepOrder) {
  Dict d{{"z", ones({1})}, {"a", ones({1})}};
  Dict copy = d;
  copy.erase("z");
  copy["q"] = zeros({1});
  EXPECT_EQ(d.keys(), (std::vector<std::string>{"z", "a"}));
  EXPECT_EQ(copy.keys(), (std::vector<std::string>{"a", "q"}));
  Dict moved = std::move(copy);
  EXPECT_EQ(moved.keys(), (std::vector<std::string>{"a", "q"}));
  EXPECT_TRUE(moved.contains("q"));  // the index still points into the moved items
  moved = d;
  EXPECT_EQ(moved.keys(), (std::vector<std::string>{"z", "a"}));
  EXPECT_TRUE(moved.contains("z"));
}

TEST(OrderedDict, ConvertsToAndFromStdMapAsStateDictUsedToBe) {
  const Dict d{{"z", ones({1})}, {"a", zeros({1})}};
  const std::map<std::string, Tensor> m = d;
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m.begin()->first, "a");
  const Dict back = m;  // the map's sorted order
  EXPECT_EQ(back.keys(), (std::vector<std::string>{"a", "z"}));
}

}  // namespace
}  // namespace locus
