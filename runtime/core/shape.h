// Shape: the dimensions of a tensor. A small vector with room for 8 dims inline, so that
// copying tensors and computing output shapes in run() does not touch the heap (the executor
// promises no allocation in steady state). Ranks above 8 spill to the heap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <vector>

namespace xonnx {

class Shape {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;
  static constexpr size_t kInline = 8;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.end()); }
  explicit Shape(size_t n, int64_t value = 0) { assign(n, value); }
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  Shape(It first, It last) {
    assign(first, last);
  }
  Shape(const std::vector<int64_t>& dims) { assign(dims.begin(), dims.end()); }  // NOLINT
  Shape(const Shape& o) { assign(o.begin(), o.end()); }
  Shape(Shape&& o) noexcept { move_from(o); }
  Shape& operator=(const Shape& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      release();
      move_from(o);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> dims) {
    assign(dims.begin(), dims.end());
    return *this;
  }
  ~Shape() { release(); }

  // Reference kernels often want a std::vector; this copy is the price of that convenience.
  operator std::vector<int64_t>() const { return std::vector<int64_t>(begin(), end()); }  // NOLINT
  std::vector<int64_t> to_vector() const { return std::vector<int64_t>(begin(), end()); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  int64_t* data() { return data_; }
  const int64_t* data() const { return data_; }
  int64_t& operator[](size_t i) { return data_[i]; }
  const int64_t& operator[](size_t i) const { return data_[i]; }
  int64_t& at(size_t i) {
    if (i >= size_) throw std::out_of_range("Shape::at");
    return data_[i];
  }
  const int64_t& at(size_t i) const {
    if (i >= size_) throw std::out_of_range("Shape::at");
    return data_[i];
  }
  int64_t& front() { return data_[0]; }
  const int64_t& front() const { return data_[0]; }
  int64_t& back() { return data_[size_ - 1]; }
  const int64_t& back() const { return data_[size_ - 1]; }
  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  const_iterator cbegin() const { return data_; }
  const_iterator cend() const { return data_ + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  void reserve(size_t n) {
    if (n <= capacity_) return;
    int64_t* p = new int64_t[n];
    std::copy(begin(), end(), p);
    release();
    data_ = p;
    capacity_ = n;
  }
  void clear() { size_ = 0; }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }
  void push_back(int64_t v) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    data_[size_++] = v;
  }
  int64_t& emplace_back(int64_t v) {
    push_back(v);
    return back();
  }
  void pop_back() { --size_; }
  void assign(size_t n, int64_t value) {
    size_ = 0;
    resize(n, value);
  }
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  void assign(It first, It last) {
    const size_t n = static_cast<size_t>(std::distance(first, last));
    size_ = 0;
    reserve(n);
    std::copy(first, last, data_);
    size_ = n;
  }
  iterator insert(const_iterator pos, int64_t v) { return insert(pos, size_t{1}, v); }
  iterator insert(const_iterator pos, size_t n, int64_t v) {
    const size_t at = static_cast<size_t>(pos - data_);
    open_gap(at, n);
    std::fill(data_ + at, data_ + at + n, v);
    return data_ + at;
  }
  template <typename It, typename = typename std::iterator_traits<It>::iterator_category>
  iterator insert(const_iterator pos, It first, It last) {
    const size_t at = static_cast<size_t>(pos - data_);
    // Copy first: the range may alias this shape.
    Shape src;
    src.assign(first, last);
    open_gap(at, src.size());
    std::copy(src.begin(), src.end(), data_ + at);
    return data_ + at;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_t a = static_cast<size_t>(first - data_);
    const size_t b = static_cast<size_t>(last - data_);
    std::copy(data_ + b, data_ + size_, data_ + a);
    size_ -= b - a;
    return data_ + a;
  }

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }
  friend bool operator<(const Shape& a, const Shape& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const Shape& a, const std::vector<int64_t>& b) {
    return a.size_ == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const std::vector<int64_t>& a, const Shape& b) { return b == a; }
  friend bool operator!=(const Shape& a, const std::vector<int64_t>& b) { return !(a == b); }
  friend bool operator!=(const std::vector<int64_t>& a, const Shape& b) { return !(b == a); }

 private:
  void open_gap(size_t at, size_t n) {
    if (size_ + n > capacity_) reserve(std::max(size_ + n, capacity_ * 2));
    std::copy_backward(data_ + at, data_ + size_, data_ + size_ + n);
    size_ += n;
  }
  void release() {
    if (data_ != inline_) delete[] data_;
    data_ = inline_;
    capacity_ = kInline;
  }
  void move_from(Shape& o) {
    if (o.data_ == o.inline_) {
      std::copy(o.begin(), o.end(), inline_);
      data_ = inline_;
      capacity_ = kInline;
    } else {
      data_ = o.data_;
      capacity_ = o.capacity_;
      o.data_ = o.inline_;
      o.capacity_ = kInline;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  int64_t inline_[kInline];
  int64_t* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = kInline;
};

}  // namespace xonnx
