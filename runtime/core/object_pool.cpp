// The per-thread free lists behind core/object_pool.h.
#include "core/object_pool.h"

#include <cstdint>
#include <new>
#include <utility>

namespace ag::detail {
namespace {

constexpr size_t kClasses = kMaxPooledBytes / kPoolGranule;
// Per class and thread: enough for the tensors a loop or a batch of calls
// frees at once, little memory (at most 160 KiB per thread).
constexpr uint32_t kMaxFreeBlocks = 256;

constexpr std::align_val_t kBlockAlignment{kPoolAlignment};

struct FreeBlock {
  FreeBlock* next;
};

// Set once the thread's free lists are gone (a tensor freed later, by
// another thread-local's or a static's destructor, goes to operator delete).
// Trivially destructible, so it can be read after its thread's destructors.
thread_local bool t_lists_gone = false;

struct FreeLists {
  FreeBlock* head[kClasses] = {};
  uint32_t count[kClasses] = {};
  ~FreeLists() {
    t_lists_gone = true;
    for (FreeBlock*& list : head) {
      while (list) ::operator delete(std::exchange(list, list->next), kBlockAlignment);
    }
  }
};

thread_local FreeLists t_lists;

size_t class_of(size_t bytes) {
  return (bytes + kPoolGranule - 1) / kPoolGranule - 1;
}

}  // namespace

void* pool_allocate(size_t bytes) {
  size_t c = class_of(bytes);
  if (!t_lists_gone) {
    if (FreeBlock* block = t_lists.head[c]) {
      t_lists.head[c] = block->next;
      --t_lists.count[c];
      return block;
    }
  }
  return ::operator new((c + 1) * kPoolGranule, kBlockAlignment);
}

void pool_free(void* block, size_t bytes) {
  size_t c = class_of(bytes);
  if (t_lists_gone || t_lists.count[c] >= kMaxFreeBlocks) {
    ::operator delete(block, kBlockAlignment);
    return;
  }
  t_lists.head[c] = new (block) FreeBlock{t_lists.head[c]};
  ++t_lists.count[c];
}

}  // namespace ag::detail
