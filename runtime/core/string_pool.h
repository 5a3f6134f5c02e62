// The elements of string tensors. Internal to the runtime.
//
// An element is a handle (a pointer) on an immutable byte string kept for
// the process's life in one pool, each distinct string once. A handle is a
// plain 8-byte value, so every part of the runtime that moves elements as
// bytes (reshape, transpose, gather, the executor's buffers and copies, a
// TensorArray's rows) moves strings correctly, and equal strings have equal
// handles. The null handle, which zeroed memory holds, is the empty string.
// The cost: memory grows with the number of distinct strings a process
// makes (docs/strings.md).
#pragma once

#include <string>
#include <string_view>

namespace ag::detail {

using StringHandle = const std::string*;

// The handle of `bytes`, adding it to the pool on first sight. Thread-safe.
StringHandle intern(std::string_view bytes);
// The bytes of a handle (null: "").
inline std::string_view string_of(StringHandle h) {
  return h ? std::string_view(*h) : std::string_view();
}

// `bytes` as Python writes a bytes object, which is how TensorFlow prints
// strings: b'abc', with \\, \t, \n, \r and \xNN escapes, in double quotes
// when the bytes hold a ' and no ".
std::string bytes_literal(std::string_view bytes);

}  // namespace ag::detail
