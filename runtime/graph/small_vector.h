// A vector that keeps up to N elements inside itself and goes to the heap
// only beyond that. A graph node's inputs and output types are almost always
// one to three values; held inline, tracing, copying and freeing a body of
// 100k nodes does not allocate and free two small blocks per node.
// The subset of std::vector's interface the runtime uses, for trivially
// copyable elements (ValueRef, ValueType). Internal to the runtime.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace ag::graph {

template <class T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "elements are copied as bytes");
  static_assert(N > 0);

 public:
  using value_type = T;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> items) { assign(items.begin(), items.end()); }
  template <std::input_iterator It>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  // Implicit, like a std::vector assigned from another: node.inputs = values.
  SmallVector(const std::vector<T>& items) { assign(items.begin(), items.end()); }
  SmallVector(const SmallVector& other) { copy(other); }
  SmallVector(SmallVector&& other) noexcept { take(other); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) copy(other);
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> items) {
    assign(items.begin(), items.end());
    return *this;
  }
  ~SmallVector() { release(); }

  template <std::input_iterator It>
  void assign(It first, It last) {
    clear();
    if constexpr (std::forward_iterator<It>) reserve(size_t(std::distance(first, last)));
    for (; first != last; ++first) push_back(*first);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  T* data() { return on_heap() ? storage_.heap : storage_.items; }
  const T* data() const { return on_heap() ? storage_.heap : storage_.items; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  void reserve(size_t capacity) {
    if (capacity <= capacity_) return;
    T* grown = static_cast<T*>(::operator new(capacity * sizeof(T)));
    if (size_) std::memcpy(static_cast<void*>(grown), data(), size_ * sizeof(T));
    release();
    storage_.heap = grown;
    capacity_ = uint32_t(capacity);
  }
  void push_back(const T& value) {
    if (size_ == capacity_) {
      const T copy = value;  // `value` may be an element of this vector
      reserve(2 * size_t(capacity_));
      new (data() + size_++) T(copy);
      return;
    }
    new (data() + size_++) T(value);
  }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    push_back(T{std::forward<Args>(args)...});
    return back();
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void resize(size_t size, const T& value = T{}) {
    reserve(size);
    for (size_t i = size_; i < size; ++i) new (data() + i) T(value);
    size_ = uint32_t(size);
  }
  template <std::input_iterator It>
  T* insert(const T* position, It first, It last) {
    const size_t at = size_t(position - data());
    std::vector<T> items(first, last);  // the range may be part of this vector
    if (size_ + items.size() > capacity_) {
      reserve(std::max(size_ + items.size(), 2 * size_t(capacity_)));
    }
    T* p = data() + at;
    std::memmove(static_cast<void*>(p + items.size()), p, (size_ - at) * sizeof(T));
    if (!items.empty()) std::memcpy(static_cast<void*>(p), items.data(), items.size() * sizeof(T));
    size_ += uint32_t(items.size());
    return p;
  }
  T* erase(const T* first, const T* last) {
    T* p = data() + (first - data());
    const size_t count = size_t(last - first);
    std::memmove(static_cast<void*>(p), last, size_t(end() - last) * sizeof(T));
    size_ -= uint32_t(count);
    return p;
  }
  T* erase(const T* position) { return erase(position, position + 1); }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool on_heap() const { return capacity_ > N; }
  void release() {
    if (on_heap()) ::operator delete(storage_.heap);
    capacity_ = N;
  }
  void copy(const SmallVector& other) {
    if (other.on_heap()) return assign(other.begin(), other.end());
    release();
    std::memcpy(static_cast<void*>(&storage_), &other.storage_, sizeof(storage_));
    size_ = other.size_;
  }
  // Takes `other`'s elements, leaving it empty; this one must hold no heap
  // block. Both copy the whole inline array, a fixed size the compiler
  // inlines (its unused slots are bytes of a trivially copyable type).
  void take(SmallVector& other) {
    // (GCC warns of the unused slots, which are never read as elements.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
    std::memcpy(static_cast<void*>(&storage_), &other.storage_, sizeof(storage_));
#pragma GCC diagnostic pop
    capacity_ = std::exchange(other.capacity_, uint32_t(N));
    size_ = std::exchange(other.size_, 0);
  }

  uint32_t size_ = 0;
  uint32_t capacity_ = N;  // above N: the elements are in storage_.heap
  union Storage {
    Storage() {}
    T items[N];
    T* heap;
  } storage_;
};

}  // namespace ag::graph
