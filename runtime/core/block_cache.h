// Data blocks for tensors, 64-byte aligned. Large blocks are kept after use
// and handed out again to the next tensor of the same size: glibc returns a
// freed block of 128 KiB or more to the system, so every new large tensor
// (a graph's result, a variable's new value, a gradient) would fault its
// pages in again, which is most of a training step's gap to hand-written
// code (docs/benchmarks.md, "Training step"). Small blocks come from the
// object pool's per-thread free lists (core/object_pool.h). Internal to the
// runtime.
#pragma once

#include <cstddef>

namespace ag::detail {

// A block of at least `bytes` bytes (rounded up to a multiple of 64).
void* allocate_block(size_t bytes);
// Gives back a block from allocate_block(bytes), with the same `bytes`.
void free_block(void* block, size_t bytes);
// Frees every large block kept for reuse (for memory measurements:
// tools/bench/memory_bench.cpp).
void release_cached_blocks();

}  // namespace ag::detail
