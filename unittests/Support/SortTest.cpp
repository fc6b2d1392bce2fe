//===- SortTest.cpp - stableSort keeps ties in order ----------------------===//

#include "optiml/Support/Sort.h"
#include "gtest/gtest.h"
#include <cmath>
#include <string>
#include <utility>

using namespace optiml;

namespace {

TEST(StableSortTest, SortsAndKeepsTiesInOrder) {
  std::vector<std::pair<int, std::string>> V = {
      {2, "a"}, {1, "b"}, {2, "c"}, {3, "d"}, {1, "e"}, {2, "f"}, {3, "g"}};
  stableSort(V, [](const auto &L, const auto &R) { return L.first > R.first; });
  std::vector<std::string> Order;
  for (auto &[K, S] : V)
    Order.push_back(S);
  EXPECT_EQ(Order,
            (std::vector<std::string>{"d", "g", "a", "c", "f", "b", "e"}));
}

TEST(StableSortTest, EmptyOneAndMany) {
  std::vector<unsigned> Empty;
  stableSort(Empty, [](unsigned L, unsigned R) { return L < R; });
  EXPECT_TRUE(Empty.empty());
  std::vector<unsigned> One = {7};
  stableSort(One, [](unsigned L, unsigned R) { return L < R; });
  EXPECT_EQ(One, std::vector<unsigned>{7});
  std::vector<unsigned> Many;
  for (unsigned I = 0; I < 1000; ++I)
    Many.push_back((I * 7919) % 1000);
  stableSort(Many, [](unsigned L, unsigned R) { return L < R; });
  for (unsigned I = 0; I < 1000; ++I)
    EXPECT_EQ(Many[I], I);
}

// A NaN reward compares false both ways: the sort still ends, in bounds,
// with every element kept.
TEST(StableSortTest, NaNKeepsEveryElement) {
  std::vector<double> V = {1, NAN, 3, NAN, 2, 0, NAN};
  stableSort(V, [](double L, double R) { return L > R; });
  EXPECT_EQ(V.size(), 7u);
  EXPECT_EQ(
      std::count_if(V.begin(), V.end(), [](double D) { return std::isnan(D); }),
      3);
}

} // namespace
