// Random state for the stateful random ops. Internal to the runtime.
#pragma once

#include <cstdint>

#include "ops/op_registry.h"

namespace ag::ops {

// The eager generator for `seed`: repeated eager calls with one seed continue
// one sequence, as TensorFlow's op seeds do.
RandomState& eager_random_state(uint64_t seed);
// A seed for a random op called without one, derived from the global seed.
uint64_t next_auto_seed();
// 64 random bits for element `index` of the current draw; counter-based, so
// eager and graph runs of one seed agree.
uint64_t random_bits(const RandomState& state, uint64_t index);

}  // namespace ag::ops
