// The random ops' generator state: counter-based bits from a seed, the eager
// sequence of each seed, and ag::set_random_seed.
#include "ops/random.h"

#include <atomic>
#include <map>
#include <mutex>

#include "ag/ops.h"

namespace ag::ops {
namespace {

std::atomic<uint64_t> g_global_seed{0x5eed};
std::atomic<uint64_t> g_auto_counter{0};

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The eager generators, one per seed. Entries are never erased: callers
// hold references to them.
struct EagerStates {
  std::mutex mu;
  std::map<uint64_t, RandomState> by_seed;
};
EagerStates& eager_states() {
  static EagerStates states;
  return states;
}

}  // namespace

RandomState& eager_random_state(uint64_t seed) {
  EagerStates& states = eager_states();
  std::lock_guard lock(states.mu);
  auto [it, inserted] = states.by_seed.try_emplace(seed);
  if (inserted) it->second.key = splitmix64(seed);
  return it->second;
}

uint64_t next_auto_seed() {
  return splitmix64(g_global_seed.load() ^ splitmix64(++g_auto_counter));
}

uint64_t random_bits(const RandomState& state, uint64_t index) {
  return splitmix64(state.key ^ splitmix64(state.counter + index));
}

}  // namespace ag::ops

namespace ag::api {
// As tf.random.set_seed: restarts every seeded sequence, so the calls that
// follow repeat the values they gave after the previous set_random_seed.
void set_random_seed(uint64_t seed) {
  ops::g_global_seed = seed;
  ops::g_auto_counter = 0;
  ops::EagerStates& states = ops::eager_states();
  std::lock_guard lock(states.mu);
  for (auto& [_, state] : states.by_seed) state.counter = 0;
}
}  // namespace ag::api
