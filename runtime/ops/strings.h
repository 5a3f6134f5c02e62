// What the string ops' shape rules and kernels share (kernels_strings.cpp).
// Internal to the runtime.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/string_pool.h"

namespace ag::ops {

// The pieces of `s` at `sep`, as tf.strings.split: an empty `sep` splits at
// runs of whitespace and drops empty pieces; another splits at each
// occurrence and keeps them ("a,,b" -> "a", "", "b"). An empty `s` has no
// pieces.
std::vector<std::string_view> split_string(std::string_view s, std::string_view sep);
// The most pieces any of the `n` strings at `strings` splits into: the
// width of string_split's dense output.
int64_t string_split_width(const detail::StringHandle* strings, int64_t n,
                           detail::StringHandle sep);

}  // namespace ag::ops
