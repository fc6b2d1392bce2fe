//===- Sort.h - A stable sort without std::get_temporary_buffer -*- C++ -*-===//
//
// libstdc++ 12's std::stable_sort (and llvm::stable_sort, which calls it)
// uses std::get_temporary_buffer, deprecated in C++17: clang 22 warns at
// every call. stableSort sorts the same way (equal elements keep their
// order) by merging runs with std::merge, which, unlike std::sort, stays in
// bounds whatever the comparator does with NaN.
//
//===----------------------------------------------------------------------===//
#ifndef OPTIML_SUPPORT_SORT_H
#define OPTIML_SUPPORT_SORT_H

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

namespace optiml {

/// Sorts \p V by \p Less (a strict weak order); equal elements keep their
/// relative order, as with std::stable_sort.
template <typename T, typename Compare>
void stableSort(std::vector<T> &V, Compare Less) {
  for (size_t Width = 1; Width < V.size(); Width *= 2) {
    std::vector<T> Merged;
    Merged.reserve(V.size());
    for (size_t Lo = 0; Lo < V.size(); Lo += 2 * Width) {
      size_t Mid = std::min(Lo + Width, V.size());
      size_t Hi = std::min(Lo + 2 * Width, V.size());
      // On ties std::merge takes the left run first: the sort is stable.
      std::merge(std::make_move_iterator(V.begin() + Lo),
                 std::make_move_iterator(V.begin() + Mid),
                 std::make_move_iterator(V.begin() + Mid),
                 std::make_move_iterator(V.begin() + Hi),
                 std::back_inserter(Merged), Less);
    }
    V = std::move(Merged);
  }
}

} // namespace optiml

#endif // OPTIML_SUPPORT_SORT_H
