#pragma once
/// \file shape.h
/// Shape: a small vector of dimension sizes (or strides) stored inline for up to six dims, so
/// that creating a tensor does not allocate for its metadata.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iosfwd>
#include <span>
#include <vector>

namespace locus {

/// Sizes or strides of a tensor. Inline up to kInline entries, heap beyond.
class Shape {
 public:
  static constexpr size_t kInline = 6;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.size()); }
  /// One dim of `size`: a lone integer stands for a size wherever one is taken, as LibTorch's
  /// IntArrayRef lets it (`randn(10)`, `x.view(16)`, `empty(n, device)`).
  /* implicit */ Shape(int64_t size) { assign(&size, 1); }
  /* implicit */ Shape(const std::vector<int64_t>& dims) { assign(dims.data(), dims.size()); }
  /* implicit */ Shape(std::span<const int64_t> dims) { assign(dims.data(), dims.size()); }
  /// `n` copies of `value`.
  Shape(size_t n, int64_t value) {
    resize(n);
    std::fill(begin(), end(), value);
  }
  Shape(const Shape& o) { assign(o.data(), o.size()); }
  Shape(Shape&& o) noexcept { steal(o); }
  Shape& operator=(const Shape& o) {
    if (this != &o) assign(o.data(), o.size());
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~Shape() { release(); }

  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  int64_t* data() noexcept { return heap_ ? heap_ : inline_; }
  const int64_t* data() const noexcept { return heap_ ? heap_ : inline_; }
  int64_t& operator[](size_t i) noexcept { return data()[i]; }
  int64_t operator[](size_t i) const noexcept { return data()[i]; }
  int64_t* begin() noexcept { return data(); }
  int64_t* end() noexcept { return data() + size_; }
  const int64_t* begin() const noexcept { return data(); }
  const int64_t* end() const noexcept { return data() + size_; }
  int64_t front() const noexcept { return data()[0]; }
  int64_t back() const noexcept { return data()[size_ - 1]; }

  /// Changes the length; new entries are zero.
  void resize(size_t n) {
    if (n > capacity()) grow(n);
    for (size_t i = size_; i < n; ++i) data()[i] = 0;
    size_ = n;
  }
  void push_back(int64_t v) {
    if (size_ == capacity()) grow(size_ * 2);
    data()[size_++] = v;
  }
  void insert(size_t pos, int64_t v) {
    push_back(0);
    int64_t* d = data();
    std::memmove(d + pos + 1, d + pos, (size_ - 1 - pos) * sizeof(int64_t));
    d[pos] = v;
  }
  void erase(size_t pos) {
    int64_t* d = data();
    std::memmove(d + pos, d + pos + 1, (size_ - 1 - pos) * sizeof(int64_t));
    --size_;
  }
  /// Product of the entries (1 for an empty shape).
  int64_t numel() const noexcept {
    int64_t n = 1;
    for (int64_t v : *this) n *= v;
    return n;
  }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  operator std::span<const int64_t>() const noexcept { return {data(), size_}; }

  friend bool operator==(const Shape& a, const Shape& b) noexcept {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const Shape& a, const std::vector<int64_t>& b) noexcept {
    return a.size_ == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  size_t capacity() const noexcept { return heap_ ? heap_cap_ : kInline; }
  void assign(const int64_t* src, size_t n) {
    if (n > capacity()) grow(n);
    if (n) std::memmove(data(), src, n * sizeof(int64_t));
    size_ = n;
  }
  void grow(size_t n) {
    n = std::max(n, kInline * 2);
    auto* p = new int64_t[n];
    if (size_) std::memcpy(p, data(), size_ * sizeof(int64_t));
    delete[] heap_;
    heap_ = p;
    heap_cap_ = n;
  }
  void release() noexcept {
    delete[] heap_;
    heap_ = nullptr;
    size_ = 0;
  }
  void steal(Shape& o) noexcept {
    size_ = o.size_;
    heap_ = o.heap_;
    heap_cap_ = o.heap_cap_;
    if (!heap_) std::memcpy(inline_, o.inline_, size_ * sizeof(int64_t));
    o.heap_ = nullptr;
    o.size_ = 0;
  }

  size_t size_ = 0;
  int64_t* heap_ = nullptr;
  size_t heap_cap_ = 0;
  int64_t inline_[kInline];
};

/// LibTorch's IntArrayRef, the type its functions take sizes, dims and strides as. Locus's is a
/// Shape, which owns its (inline) entries where LibTorch's is a view of someone else's array; it
/// converts from a braced list, a std::vector, a span and a lone integer alike.
using IntArrayRef = Shape;

/// Prints "[3, 4]".
std::ostream& operator<<(std::ostream& os, const Shape& s);

}  // namespace locus

LOCUS_API_END
