#include "harness/go/sort.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

// sort.SliceStable, step for step. The expected orders are Go 1.26's for the same input.

namespace harness::go {
namespace {

std::vector<int> input() {
  std::vector<int> data;
  int x = 7;
  for (int i = 0; i < 57; ++i) {
    x = (x * 37 + 11) % 101;
    data.push_back(x);
  }
  return data;
}

TEST(GoSliceStable, FollowsGoForAComparatorThatIsNotAStrictWeakOrder) {
  // Odd numbers are incomparable with everything, so "equivalent" is not transitive: the result
  // depends on the algorithm's exact steps (std::stable_sort's differs).
  auto data = input();
  sliceStable(data, [](int a, int b) { return a % 2 == 0 && b % 2 == 0 && a < b; });
  EXPECT_THAT(data, ::testing::ElementsAreArray(
                        {2,  68, 85, 25, 27, 0,  11, 14, 24, 91, 45, 60, 9,  41, 13, 88, 35, 94, 55,
                         26, 56, 64, 63, 19, 7,  2,  68, 85, 25, 27, 0,  11, 14, 24, 91, 45, 60, 9,
                         41, 13, 88, 35, 94, 55, 26, 56, 64, 63, 19, 7,  2,  68, 85, 25, 27, 0,  11}));
}

TEST(GoSliceStable, AgreesWithStableSortForAStrictWeakOrder) {
  auto data = input();
  auto expected = data;
  const auto by_tens = [](int a, int b) { return a / 10 < b / 10; };
  sliceStable(data, by_tens);
  std::stable_sort(expected.begin(), expected.end(), by_tens);
  EXPECT_EQ(data, expected);
}

}  // namespace
}  // namespace harness::go
