// A cache hit allocates nothing, not even for what it returns
// (docs/architecture.md, "Tracing and the cache" and "Executor"): the global operator new is
// replaced by one that counts, on this thread, while a test switches counting on. Everything
// forwards to malloc/free, which ASan allows.
//
// What the counter sees: every operator new (std::make_shared, std::vector,
// std::string, ...). Tensor element storage of more than 256 bytes comes
// from std::aligned_alloc, not operator new, and is not counted; a smaller
// one comes from the object pool (core/block_cache.h), whose new blocks are
// counted, and the data of a tensor of up to 64 bytes lies in its Storage
// object (make_shared), which is counted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "core/block_cache.h"
#include "core/object_pool.h"
#include "function_cache_util.h"
#include "staged_test_util.h"

namespace {

// Plain (trivially initialised) thread-locals: no TLS constructor runs inside
// operator new.
thread_local bool t_counting = false;
thread_local size_t t_allocations = 0;

void* counted_malloc(size_t bytes) {
  if (t_counting) ++t_allocations;
  void* p = std::malloc(bytes == 0 ? 1 : bytes);
  if (!p) throw std::bad_alloc();
  return p;
}

void* counted_aligned_malloc(size_t bytes, std::align_val_t align) {
  if (t_counting) ++t_allocations;
  size_t alignment = std::max(size_t(align), sizeof(void*));
  size_t rounded = (std::max<size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  if (!p) throw std::bad_alloc();
  return p;
}

// Counts the operator-new calls made on this thread while it lives.
class AllocationCounter {
 public:
  AllocationCounter() {
    t_allocations = 0;
    t_counting = true;
  }
  ~AllocationCounter() { t_counting = false; }
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;
  size_t stop() {
    t_counting = false;
    return t_allocations;
  }
};

}  // namespace

void* operator new(size_t bytes) {
  return counted_malloc(bytes);
}
void* operator new[](size_t bytes) {
  return counted_malloc(bytes);
}
void* operator new(size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return counted_malloc(bytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return counted_malloc(bytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new(size_t bytes, std::align_val_t align) {
  return counted_aligned_malloc(bytes, align);
}
void* operator new[](size_t bytes, std::align_val_t align) {
  return counted_aligned_malloc(bytes, align);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, size_t, std::align_val_t) noexcept {
  std::free(p);
}

namespace {

using ag::Tensor;
using ag_test::cached_concrete;

auto make_add3() {
  return ag::function([](Tensor a, Tensor b, Tensor c) { return a + b + c; }, {.name = "add3"});
}

TEST(FunctionAlloc, CounterSeesAllocations) {
  AllocationCounter counter;
  auto* p = new int(3);
  delete p;
  std::string s(100, 'x');  // past the small-string buffer
  EXPECT_EQ(counter.stop(), 2u);
}

// The exact count is the contract: a change that adds an allocation to the
// hot path must show up here. A cache hit allocates nothing:
//   - the output vector is the calling thread's, reused (include/ag/function.h);
//   - the result's TensorImpl and Storage come from the thread's free lists of
//     small blocks (core/object_pool.h), where the previous result's went,
//     and a scalar's data lies inside its Storage;
//   - the intermediate a + b lives in a buffer of the plan's arena, which the
//     warm-up calls allocated; the arena comes back from the plan's slot.
constexpr size_t kCacheHitAllocations = 0;

TEST(FunctionAlloc, CacheHitOfAThreeArgumentFunctionAllocatesNothing) {
  auto add3 = make_add3();
  const Tensor a = ag::constant(1.5f), b = ag::constant(2.25f), c = ag::constant(-0.75f);
  add3(a, b, c);  // traces
  add3(a, b, c);  // a cache hit that leaves the arena's buffers allocated
  ASSERT_EQ(add3.tracing_count(), 1);

  Tensor result;
  {
    AllocationCounter counter;
    result = add3(a, b, c);
    EXPECT_EQ(counter.stop(), kCacheHitAllocations);
  }
  EXPECT_EQ(result.item<float>(), 3.0f);
  EXPECT_EQ(add3.tracing_count(), 1);
}

// The pool behind a result's TensorImpl and Storage: a freed block is the
// next one handed out (on this thread), and a block the pool has none of is
// an operator new that the counter sees.
TEST(FunctionAlloc, ObjectPoolReusesFreedBlocksAndCountsNewOnes) {
  namespace detail = ag::detail;
  constexpr size_t kBytes = 150;
  std::vector<void*> held(300);  // more than a free list keeps: it runs dry
  for (void*& p : held) p = detail::pool_allocate(kBytes);
  size_t fresh;
  void* again;
  {
    AllocationCounter counter;
    void* extra = detail::pool_allocate(kBytes);
    fresh = counter.stop();
    detail::pool_free(extra, kBytes);
    AllocationCounter reuse;
    again = detail::pool_allocate(kBytes);
    EXPECT_EQ(reuse.stop(), 0u);
    EXPECT_EQ(again, extra);
  }
  EXPECT_EQ(fresh, 1u);
  detail::pool_free(again, kBytes);
  for (void* p : held) detail::pool_free(p, kBytes);
}

// Small tensor data (65 to 256 bytes) comes from the same pool, aligned
// for tensors: a block the pool has none of is an operator new, a freed one
// is the next one handed out.
TEST(FunctionAlloc, SmallTensorDataComesFromTheObjectPool) {
  namespace detail = ag::detail;
  constexpr size_t kBytes = 96;  // a [2, 3, 4] float32 result
  std::vector<void*> held(300);  // more than a free list keeps: it runs dry
  for (void*& p : held) p = detail::allocate_block(kBytes);
  AllocationCounter counter;
  void* extra = detail::allocate_block(kBytes);
  EXPECT_EQ(counter.stop(), 1u);
  detail::free_block(extra, kBytes);
  AllocationCounter reuse;
  void* again = detail::allocate_block(kBytes);
  EXPECT_EQ(reuse.stop(), 0u);
  EXPECT_EQ(again, extra);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(again) % detail::kPoolAlignment, 0u);
  detail::free_block(again, kBytes);
  for (void* p : held) detail::free_block(p, kBytes);
}

TEST(FunctionAlloc, RepeatedCacheHitsAllocateNothing) {
  auto add3 = make_add3();
  const Tensor a = ag::constant(1), b = ag::constant(2), c = ag::constant(3);
  add3(a, b, c);
  add3(a, b, c);
  constexpr size_t kCalls = 50;
  AllocationCounter counter;
  for (size_t i = 0; i < kCalls; ++i) add3(a, b, c);
  EXPECT_EQ(counter.stop(), kCalls * kCacheHitAllocations);
}

// With None dims the executor reruns each step's shape rule on every call,
// with the rule's inputs in inline arrays: still nothing.
TEST(FunctionAlloc, UnknownDimsCacheHitAllocatesNothing) {
  const ag::TensorSpec vector_spec({ag::kUnknownDim}, ag::float32);
  auto add3 = ag::function([](Tensor a, Tensor b, Tensor c) { return a + b + c; },
                           {.input_signature = std::vector{vector_spec, vector_spec, vector_spec}});
  const Tensor v = ag::constant({1.0f, 2.0f});
  add3(v, v, v);
  add3(v, v, v);
  AllocationCounter counter;
  add3(v, v, v);
  EXPECT_EQ(counter.stop(), kCacheHitAllocations);
}

TEST(FunctionAlloc, SignatureLookupAllocatesNothing) {
  auto add3 = make_add3();
  const Tensor a = ag::constant(1.5f), b = ag::constant(2.25f), c = ag::constant(-0.75f);
  const Tensor i = ag::constant(1), v = ag::constant({1.0f, 2.0f});
  add3(a, b, c);
  add3(i, i, i);  // a second signature in the cache
  add3(v, a, c);

  AllocationCounter counter;
  const ag::detail::ConcreteCore* hit = cached_concrete(add3, a, b, c);
  const ag::detail::ConcreteCore* other = cached_concrete(add3, i, i, i);
  const ag::detail::ConcreteCore* miss = cached_concrete(add3, v, v, v);
  EXPECT_EQ(counter.stop(), 0u);
  EXPECT_NE(hit, nullptr);
  EXPECT_NE(other, nullptr);
  EXPECT_NE(hit, other);
  EXPECT_EQ(miss, nullptr);
}

// Literal arguments (an int and a string) are compared by value, through
// string_view: still no allocation.
TEST(FunctionAlloc, LookupWithLiteralArgumentsAllocatesNothing) {
  auto scaled = ag::function([](Tensor x, int factor, const std::string& mode) {
    return mode == "double" ? x * (2 * factor) : x * factor;
  });
  const Tensor x = ag::constant(3);
  const std::string mode = "a mode name longer than the small-string buffer";
  scaled(x, 4, mode);

  AllocationCounter counter;
  const ag::detail::ConcreteCore* hit = cached_concrete(scaled, x, 4, mode);
  const ag::detail::ConcreteCore* miss = cached_concrete(scaled, x, 5, mode);
  EXPECT_EQ(counter.stop(), 0u);
  EXPECT_NE(hit, nullptr);
  EXPECT_EQ(miss, nullptr);
}

// ---- Staged loops: an iteration allocates nothing ------------------------------
//
// Each function is called once with many iterations (so every buffer has its
// final size), then counted with few and with many iterations: the counts
// must be equal, whatever the number of iterations.
// `call(n)` runs the function with n iterations.
template <class Call>
void expect_iterations_allocate_nothing(const Call& call, int few, int many) {
  call(ag::constant(many));
  call(ag::constant(few));
  size_t with_few, with_many;
  {
    AllocationCounter counter;
    call(ag::constant(few));
    with_few = counter.stop();
  }
  {
    AllocationCounter counter;
    call(ag::constant(many));
    with_many = counter.stop();
  }
  EXPECT_EQ(with_few, with_many) << few << " iterations vs " << many;
}

// The guide workloads whose plans plan_buffers_test.cpp counts: once the
// first call has made the arena, a call allocates nothing through operator
// new. (Their large results are blocks of the block cache, which this counter
// does not see; tools/bench/memory_bench.cpp measures their bytes.)
TEST(FunctionAlloc, WarmCallsOfTheGuideWorkloadsAllocateNothing) {
  auto expect_warm_call_allocates_nothing = [](const char* name, const auto& call) {
    call();
    AllocationCounter counter;
    call();
    EXPECT_EQ(counter.stop(), kCacheHitAllocations) << name;
  };
  auto mse = ag::function(ag_workloads::mean_squared_error);
  const Tensor a = ag::random_uniform({100000}, -1.0, 1.0, ag::float32, 1);
  const Tensor b = ag::random_uniform({100000}, -1.0, 1.0, ag::float32, 2);
  expect_warm_call_allocates_nothing("mse", [&] { return mse(a, b); });
  auto collatz = ag::function(ag_workloads::collatz_steps);
  const Tensor x = ag::range(ag::constant(1), ag::constant(3001));
  expect_warm_call_allocates_nothing("collatz", [&] { return collatz(x); });
  auto rnn = ag::function(ag_workloads::dynamic_rnn);
  const Tensor input = ag::random_uniform({8, 20, 16}, -1.0, 1.0, ag::float32, 3);
  const Tensor state = ag::zeros({8, 16}, ag::float32);
  expect_warm_call_allocates_nothing("dynamic_rnn", [&] { return rnn(input, state); });
}

// A scalar loop: sum of range(n).
TEST(FunctionAlloc, StagedForLoopIterationsAllocateNothing) {
  auto f = ag::function([](Tensor n) {
    Tensor s = ag::constant(0);
    ag::for_stmt(
        ag::range(n), ag::no_extra_test, [&](Tensor i) { s = s + i; }, ag::state({"s"}, s));
    return s;
  });
  expect_iterations_allocate_nothing(f, 3, 1000);
  EXPECT_EQ(f.tracing_count(), 1);
}

// Branches in the body (fizzbuzz counting): If steps per iteration.
TEST(FunctionAlloc, StagedIfInsideALoopAllocatesNothingPerIteration) {
  auto f = ag::function(ag_test::fizzbuzz_count);
  expect_iterations_allocate_nothing(f, 3, 1000);
  EXPECT_EQ(f.tracing_count(), 1);
}

// Shapes known only at run time inside the body: x has a None dim, so every
// step reruns its shape rule on each iteration.
TEST(FunctionAlloc, DynamicShapesInALoopAllocateNothingPerIteration) {
  auto f = ag::function(
      [](Tensor n, Tensor x) {
        ag::for_stmt(
            ag::range(n), ag::no_extra_test, [&](Tensor) { x = ag::tanh(x) * 0.5f; },
            ag::state({"x"}, x));
        return x;
      },
      {.input_signature = std::vector{ag::TensorSpec({}, ag::int32),
                                      ag::TensorSpec({ag::kUnknownDim}, ag::float32)}});
  const Tensor x = ag::constant({0.5f, 1.0f, 2.0f});
  expect_iterations_allocate_nothing([&](const Tensor& n) { return f(n, x); }, 3, 1000);
  EXPECT_EQ(f.tracing_count(), 1);
}

// Loop variables that trade values are held aside in scratch buffers.
TEST(FunctionAlloc, LoopVariablesThatTradeValuesAllocateNothingPerIteration) {
  auto f = ag::function([](Tensor n) {
    Tensor x = ag::constant({1.0f, 2.0f}), y = ag::constant({3.0f, 4.0f});
    ag::for_stmt(
        ag::range(n), ag::no_extra_test,
        [&](Tensor) {
          Tensor old_x = x;
          x = y;
          y = old_x;
        },
        ag::state({"x", "y"}, x, y));
    return x - y;
  });
  expect_iterations_allocate_nothing(f, 3, 1000);
  EXPECT_EQ(f(ag::constant(3)).values_string(), "[2. 2.]");
}

// TensorArrays written in the loop, of static size (in place) and of
// dynamic size (growing; its buffer comes from aligned_alloc, and is
// enlarged O(log n) times, not counted here).
TEST(FunctionAlloc, TensorArrayWritesInALoopAllocateNothingPerIteration) {
  auto f = ag::function([](Tensor n) {
    ag::TensorArray fixed(ag::float32, 1000);
    ag::TensorArray growing(ag::float32, 0, /*dynamic_size=*/true);
    ag::for_stmt(
        ag::range(n), ag::no_extra_test,
        [&](Tensor i) {
          Tensor v = ag::cast(i, ag::float32);
          fixed.write(i, v);
          growing.write(i, v);
        },
        ag::state({"fixed", "growing"}, fixed, growing));
    return ag::reduce_sum(fixed.stack()) + ag::reduce_sum(growing.stack());
  });
  expect_iterations_allocate_nothing(f, 3, 1000);
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(f(ag::constant(4)).item<float>(), 12.0f);
}

}  // namespace
