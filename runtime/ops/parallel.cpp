// The intra-op threads. Where oneDNN runs (AG_GEMM=onednn), a kernel's
// chunks run on OpenMP's team of the calling thread: the same threads oneDNN's
// primitives run on, so that the two never compete for the cores (a second
// pool's polling thread took the core from OpenMP's, which then woke late for
// the next matrix product). Elsewhere (AG_GEMM=openblas, and the TSan build:
// libgomp is not instrumented) the runtime has a pool of its own: n - 1
// threads that wait for one job at a time. On either, the threads take a
// job's chunks from an atomic counter, as the calling thread does. One caller
// uses the threads at a time; another caller meanwhile runs its kernel on its
// own thread, so concurrent graphs never wait for each other.
//
// Waking a sleeping thread takes tens of microseconds, as long as half of a
// 1e6-element kernel: the caller would take every chunk itself before the
// worker woke. So the own pool's workers poll for the next job for kSpinTime
// after each one before they sleep (as OpenMP's and OpenBLAS's threads do),
// unless a BLAS call starts, and the caller polls for the workers' last
// chunks before it sleeps.
#include "ops/parallel.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ag/error.h"

#if AG_GEMM_ONEDNN && !defined(__SANITIZE_THREAD__)
#define AG_PARALLEL_ON_OPENMP 1
// libgomp's entry point for a parallel region, what GCC compiles
// `#pragma omp parallel num_threads(n)` to: runs fn(data) on the calling
// thread's team of n threads, this one among them, and returns when all have.
// Called by name, so that no source needs -fopenmp (Eigen would start threads
// of its own) and any compiler builds it.
extern "C" void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
#endif

namespace ag {
namespace ops {
namespace {

std::atomic<int> g_threads{1};
thread_local bool t_in_parallel_region = false;

struct Job {
  detail_parallel::RangeFn fn;
  void* context;
  int64_t n;
  int64_t chunk;
  int64_t chunks;
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error = nullptr;  // the first failing chunk's, written by that chunk only

  void rethrow_the_first_error() const {
    if (error) std::rethrow_exception(error);
  }
};

// Runs chunks of `job` until none is left.
void take_chunks(Job& job) {
  t_in_parallel_region = true;
  for (int64_t c; (c = job.next.fetch_add(1, std::memory_order_relaxed)) < job.chunks;) {
    int64_t begin = c * job.chunk;
    try {
      job.fn(job.context, c, begin, std::min(job.n, begin + job.chunk));
    } catch (...) {
      if (!job.failed.exchange(true, std::memory_order_relaxed))
        job.error = std::current_exception();
    }
  }
  t_in_parallel_region = false;
}

#if AG_PARALLEL_ON_OPENMP
void run_on_threads(Job& job) {
  GOMP_parallel([](void* job) { take_chunks(*static_cast<Job*>(job)); }, &job, unsigned(job.chunks),
                0);
  job.rethrow_the_first_error();
}
#else
constexpr auto kSpinTime = std::chrono::microseconds(200);

// Counts calls into libraries with threads of their own (OpenBLAS, oneDNN): a
// polling worker goes to sleep when one starts, so that those threads get the
// cores.
std::atomic<uint64_t> g_blas_calls{0};

// A hint to the core that this thread is polling.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Polls until done() holds or kSpinTime has passed; returns done().
template <class Done>
bool poll_for(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (int i = 1; !done(); ++i) {
    if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) return false;
    cpu_relax();
  }
  return true;
}

class Pool {
 public:
  explicit Pool(int workers) {
    for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      generation_.fetch_add(1, std::memory_order_release);  // ends the workers' polling
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  int threads() const { return int(workers_.size()) + 1; }

  // Runs every chunk of `job`, on this thread and the pool's.
  void run(Job& job) {
    {
      std::lock_guard lock(mutex_);
      job_ = &job;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    take_chunks(job);
    std::unique_lock lock(mutex_);
    job_ = nullptr;  // every chunk is taken: no thread joins any more
    if (active_.load(std::memory_order_relaxed) != 0) {
      lock.unlock();
      poll_for([&] { return active_.load(std::memory_order_acquire) == 0; });
      lock.lock();
    }
    done_.wait(lock, [&] { return active_.load(std::memory_order_relaxed) == 0; });
    lock.unlock();
    job.rethrow_the_first_error();
  }

 private:
  void work() {
    uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    while (!stop_) {
      const uint64_t generation = generation_.load(std::memory_order_relaxed);
      if (generation != seen && job_ != nullptr) {
        seen = generation;
        Job* job = job_;
        active_.fetch_add(1, std::memory_order_relaxed);
        lock.unlock();
        take_chunks(*job);
        lock.lock();
        if (active_.fetch_sub(1, std::memory_order_release) == 1) done_.notify_all();
        continue;
      }
      seen = generation;  // a job that ended before this thread came to it
      lock.unlock();
      const uint64_t blas_calls = g_blas_calls.load(std::memory_order_relaxed);
      poll_for([&] {
        return generation_.load(std::memory_order_acquire) != seen ||
               g_blas_calls.load(std::memory_order_relaxed) != blas_calls;
      });
      lock.lock();
      if (generation_.load(std::memory_order_relaxed) == seen) {
        wake_.wait(lock,
                   [&] { return stop_ || generation_.load(std::memory_order_relaxed) != seen; });
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  Job* job_ = nullptr;
  // Written under mutex_; atomic so that waiting threads can poll them without it.
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> active_{0};
  bool stop_ = false;
};

std::unique_ptr<Pool> g_pool;  // under g_threads_mutex

void run_on_threads(Job& job) {
  const int threads = intra_op_threads();
  if (!g_pool || g_pool->threads() != threads) {
    g_pool.reset();
    g_pool = std::make_unique<Pool>(threads - 1);
  }
  g_pool->run(job);
}
#endif

// Held by the one caller using the intra-op threads.
std::mutex g_threads_mutex;

std::atomic<int> g_blas_threads{0};
std::mutex g_blas_mutex;

}  // namespace

void detail_parallel::run(int64_t n, int64_t grain, int64_t max_chunks, RangeFn fn, void* context) {
  std::unique_lock lock(g_threads_mutex, std::try_to_lock);
  const int threads = intra_op_threads();
  if (!lock.owns_lock() || t_in_parallel_region || threads == 1) {
    fn(context, 0, 0, n);
    return;
  }
  const int64_t chunks = std::min({int64_t(threads), max_chunks, n / grain});
  Job job{fn, context, n, (n + chunks - 1) / chunks, chunks};
  run_on_threads(job);
}

void note_library_threads([[maybe_unused]] int threads) {
#if !AG_PARALLEL_ON_OPENMP
  if (threads > 1) g_blas_calls.fetch_add(1, std::memory_order_relaxed);
#endif
}

void sync_blas_threads() {
  int want = intra_op_threads();
  note_library_threads(want);
  if (g_blas_threads.load(std::memory_order_relaxed) == want) return;
  std::lock_guard lock(g_blas_mutex);
  openblas_set_num_threads(want);
  g_blas_threads.store(want, std::memory_order_relaxed);
}

}  // namespace ops

void set_intra_op_threads(int n) {
  if (n < 1) {
    throw InvalidArgumentError("set_intra_op_threads: the thread count must be at least 1, got " +
                               std::to_string(n));
  }
  ops::g_threads.store(n, std::memory_order_relaxed);
}

int intra_op_threads() {
  return ops::g_threads.load(std::memory_order_relaxed);
}

}  // namespace ag
