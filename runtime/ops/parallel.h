// Intra-op parallelism for kernels: parallel_for splits an index range over
// the intra-op threads that ag::set_intra_op_threads counts (OpenMP's, shared
// with oneDNN, where the runtime has oneDNN). Internal to the runtime.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ag/threading.h"

namespace ag::ops {

// Below this many elements per thread, a split costs more than it saves
// (waking a pool thread takes microseconds).
inline constexpr int64_t kParallelGrain = int64_t(1) << 15;

namespace detail_parallel {
using RangeFn = void (*)(void* context, int64_t chunk, int64_t begin, int64_t end);
// Runs fn over [0, n) in at most min(intra_op_threads(), max_chunks)
// contiguous chunks of at least `grain`, numbered from 0, this thread taking
// one; returns when all are done, and rethrows the first exception a chunk
// threw. Runs [0, n) as chunk 0 on this thread when the pool is busy with
// another caller or this thread is a pool thread.
void run(int64_t n, int64_t grain, int64_t max_chunks, RangeFn fn, void* context);
}  // namespace detail_parallel

// Calls f(chunk, begin, end) on disjoint ranges covering [0, n), chunk
// numbering them from 0 to less than max_chunks (so that each can have its
// own scratch memory); with one thread or a small n, once on this thread with
// (0, 0, n), at the cost of one load.
template <class F>
void parallel_chunks(int64_t n, int64_t grain, int64_t max_chunks, F&& f) {
  if (n < 2 * grain || max_chunks < 2 || intra_op_threads() == 1) {
    f(int64_t(0), int64_t(0), n);
    return;
  }
  using Fn = std::remove_reference_t<F>;
  detail_parallel::run(
      n, grain, max_chunks,
      [](void* context, int64_t chunk, int64_t begin, int64_t end) {
        (*static_cast<Fn*>(context))(chunk, begin, end);
      },
      const_cast<void*>(static_cast<const void*>(&f)));
}

// Calls f(begin, end) on disjoint ranges covering [0, n), as parallel_chunks.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  parallel_chunks(n, grain, INT64_MAX,
                  [&f](int64_t, int64_t begin, int64_t end) { f(begin, end); });
}

// Gives OpenBLAS the intra-op thread count, if it changed since the last
// call. Called before every BLAS call.
void sync_blas_threads();

// Called before a call into a library that starts `threads` threads of its
// own (OpenBLAS, oneDNN): the runtime's own pool, where it has one, sends
// its polling workers to sleep, so that the library's threads get the cores.
void note_library_threads(int threads);

}  // namespace ag::ops
