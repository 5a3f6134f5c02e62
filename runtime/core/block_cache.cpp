#include "core/block_cache.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "core/object_pool.h"
#include "core/tensor_impl.h"

namespace ag::detail {
namespace {

// From glibc's default mmap threshold on, a freed block goes back to the
// system; smaller ones stay in malloc's own free lists.
constexpr size_t kCachedFrom = size_t(128) << 10;
// At most this many bytes wait for reuse; beyond it the oldest are freed.
constexpr size_t kCacheLimit = size_t(64) << 20;

size_t rounded_size(size_t bytes) {
  size_t granule = bytes >= kCachedFrom ? 4096 : kAlignment;
  size_t rounded = (bytes + granule - 1) / granule * granule;
  return rounded == 0 ? kAlignment : rounded;
}

class BlockCache {
 public:
  // A kept block of exactly `size` bytes, the most recently freed one, or null.
  void* take(size_t size) {
    std::lock_guard lock(mutex_);
    for (size_t i = free_.size(); i-- > 0;) {
      if (free_[i].first == size) {
        void* block = free_[i].second;
        free_.erase(free_.begin() + std::ptrdiff_t(i));
        cached_bytes_ -= size;
        return block;
      }
    }
    return nullptr;
  }
  void keep(void* block, size_t size) {
    std::vector<void*> evicted;
    {
      std::lock_guard lock(mutex_);
      free_.emplace_back(size, block);
      cached_bytes_ += size;
      size_t drop = 0;
      while (cached_bytes_ > kCacheLimit) {
        cached_bytes_ -= free_[drop].first;
        evicted.push_back(free_[drop].second);
        ++drop;
      }
      free_.erase(free_.begin(), free_.begin() + std::ptrdiff_t(drop));
    }
    for (void* b : evicted) std::free(b);
  }
  void release_all() {
    std::vector<std::pair<size_t, void*>> kept;
    {
      std::lock_guard lock(mutex_);
      kept.swap(free_);
      cached_bytes_ = 0;
    }
    for (const auto& [size, block] : kept) std::free(block);
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<size_t, void*>> free_;  // oldest first
  size_t cached_bytes_ = 0;
};

BlockCache& cache() {
  // Never destroyed: tensors in other static objects may free blocks at exit.
  static BlockCache* instance = new BlockCache;
  return *instance;
}

}  // namespace

static_assert(kPoolAlignment % kAlignment == 0, "pooled blocks hold tensor data");

void* allocate_block(size_t bytes) {
  size_t size = rounded_size(bytes);
  if (size <= kMaxPooledBytes) return pool_allocate(size);
  if (size >= kCachedFrom) {
    if (void* block = cache().take(size)) return block;
  }
  void* block = std::aligned_alloc(kAlignment, size);
  if (!block) throw std::bad_alloc();
  return block;
}

void free_block(void* block, size_t bytes) {
  size_t size = rounded_size(bytes);
  if (size <= kMaxPooledBytes) {
    pool_free(block, size);
  } else if (size >= kCachedFrom) {
    cache().keep(block, size);
  } else {
    std::free(block);
  }
}

void release_cached_blocks() {
  cache().release_all();
}

}  // namespace ag::detail
