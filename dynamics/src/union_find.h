// Internal header, not API: disjoint sets, for grouping bodies (motor blocks, sleeping islands).
#pragma once

#include <numeric>
#include <vector>

namespace sim::dynamics::detail {

/// Disjoint sets over 0..n-1, path halving, storage kept between reset()s (a step allocates
/// nothing). Which element ends up the root of a set depends on the order of joins; callers use
/// roots only to tell sets apart.
class UnionFind {
 public:
  void reset(int n) {
    parent_.resize(static_cast<std::size_t>(n));
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  /// Merges the set of x into the set of y (y's root stays the root).
  void join(int x, int y) {
    const int root = find(y);
    parent_[find(x)] = root;
  }

 private:
  std::vector<int> parent_;
};

}  // namespace sim::dynamics::detail
