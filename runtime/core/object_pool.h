// Small fixed-size blocks for the objects every eager tensor allocates, its
// TensorImpl and its Storage (with std::allocate_shared, so each block also
// holds the shared_ptr control block), and for the element data of small
// tensors (core/block_cache.h: aligned_alloc's own path costs about 650
// instructions with its free, a cache hit's whole cost for a result of 96
// bytes; docs/benchmarks.md). Freed blocks wait in a free list of
// the freeing thread, a few hundred per size class, and the next tensor made
// on that thread takes one: a cache hit of ag::function, which returns a
// fresh tensor each call, then reuses the previous result's blocks instead of
// calling operator new (docs/benchmarks.md, "Cache hit"). Blocks that
// the pool has none of come from ::operator new, aligned to kPoolAlignment.
// Internal to the runtime.
#pragma once

#include <cstddef>
#include <new>

namespace ag::detail {

// Blocks of up to kMaxPooledBytes bytes, in classes of kPoolGranule.
inline constexpr size_t kPoolGranule = 64;
inline constexpr size_t kMaxPooledBytes = 256;
// Every block's alignment: that of tensor data (core/tensor_impl.h).
inline constexpr size_t kPoolAlignment = 64;

void* pool_allocate(size_t bytes);
void pool_free(void* block, size_t bytes);

// A std::allocator for std::allocate_shared that takes single objects of up
// to kMaxPooledBytes from the pool.
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n == 1 && sizeof(T) <= kMaxPooledBytes) return static_cast<T*>(pool_allocate(sizeof(T)));
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n == 1 && sizeof(T) <= kMaxPooledBytes) {
      pool_free(p, sizeof(T));
    } else {
      ::operator delete(p);
    }
  }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace ag::detail
