#pragma once

// Go's sort package: sort.SliceStable / sort.Stable, step for step (insertion sort on blocks of
// 20, then SymMerge; go/src/sort/zsortfunc.go stable_func, insertionSort_func, symMerge_func,
// rotate_func, swapRange_func). std::stable_sort gives the same order only for a strict weak
// ordering; callers whose comparator is not one (strategic merge's normalizeSliceOrder, where an
// item missing from the order list compares as neither less nor greater) need Go's exact steps.

#include <cstddef>
#include <utility>
#include <vector>

namespace harness::go {

namespace detail {

template <class T, class Less>
class StableSorter {
 public:
  StableSorter(std::vector<T>& data, Less less) : data_(data), less_(less) {}

  void sort() {
    const std::size_t n = data_.size();
    std::size_t block = 20;
    std::size_t a = 0;
    std::size_t b = block;
    while (b <= n) {
      insertionSort(a, b);
      a = b;
      b += block;
    }
    insertionSort(a, n);
    while (block < n) {
      a = 0;
      b = 2 * block;
      while (b <= n) {
        symMerge(a, a + block, b);
        a = b;
        b += 2 * block;
      }
      if (const std::size_t m = a + block; m < n) symMerge(a, m, n);
      block *= 2;
    }
  }

 private:
  bool less(std::size_t i, std::size_t j) { return less_(data_[i], data_[j]); }
  void swap(std::size_t i, std::size_t j) { std::swap(data_[i], data_[j]); }

  void insertionSort(std::size_t a, std::size_t b) {
    for (std::size_t i = a + 1; i < b; ++i) {
      for (std::size_t j = i; j > a && less(j, j - 1); --j) swap(j, j - 1);
    }
  }

  void symMerge(std::size_t a, std::size_t m, std::size_t b) {
    if (m - a == 1) {
      std::size_t i = m;
      std::size_t j = b;
      while (i < j) {
        const std::size_t h = (i + j) / 2;
        if (less(h, a)) {
          i = h + 1;
        } else {
          j = h;
        }
      }
      for (std::size_t k = a; k + 1 < i; ++k) swap(k, k + 1);
      return;
    }
    if (b - m == 1) {
      std::size_t i = a;
      std::size_t j = m;
      while (i < j) {
        const std::size_t h = (i + j) / 2;
        if (!less(m, h)) {
          i = h + 1;
        } else {
          j = h;
        }
      }
      for (std::size_t k = m; k > i; --k) swap(k, k - 1);
      return;
    }
    const std::size_t mid = (a + b) / 2;
    const std::size_t n = mid + m;
    std::size_t start = 0;
    std::size_t r = 0;
    if (m > mid) {
      start = n - b;
      r = mid;
    } else {
      start = a;
      r = m;
    }
    const std::size_t p = n - 1;
    while (start < r) {
      const std::size_t c = (start + r) / 2;
      if (!less(p - c, c)) {
        start = c + 1;
      } else {
        r = c;
      }
    }
    const std::size_t end = n - start;
    if (start < m && m < end) rotate(start, m, end);
    if (a < start && start < mid) symMerge(a, start, mid);
    if (mid < end && end < b) symMerge(mid, end, b);
  }

  void swapRange(std::size_t a, std::size_t b, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) swap(a + i, b + i);
  }

  void rotate(std::size_t a, std::size_t m, std::size_t b) {
    std::size_t i = m - a;
    std::size_t j = b - m;
    while (i != j) {
      if (i > j) {
        swapRange(m - i, m, j);
        i -= j;
      } else {
        swapRange(m - i, m + j - i, i);
        j -= i;
      }
    }
    swapRange(m - i, m, i);
  }

  std::vector<T>& data_;
  Less less_;
};

}  // namespace detail

// sort.SliceStable(data, func(i, j int) bool { return less(data[i], data[j]) }).
template <class T, class Less>
void sliceStable(std::vector<T>& data, Less less) {
  detail::StableSorter<T, Less>(data, less).sort();
}

}  // namespace harness::go
