// The one check of a nested initializer list (ag::constant({{1, 2}, {3, 4}}),
// its strings' twin) that NestedValues and NestedStrings share.
#pragma once

#include <cstddef>
#include <string_view>

#include "ag/shape.h"

namespace ag::detail {

// Checks one node at `depth` against the shape the list's first path gave:
// a leaf at the full depth, a list of shape[depth] elements above it. `leaf`
// names a leaf in the error ("a value", "a string").
void check_nested_node(int depth, const Shape& shape, bool is_leaf, size_t children,
                       std::string_view leaf);

}  // namespace ag::detail
