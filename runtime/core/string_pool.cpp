#include "core/string_pool.h"

#include <mutex>
#include <unordered_set>

namespace ag::detail {
namespace {

struct Hash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

struct Pool {
  std::mutex mutex;
  // Nodes of an unordered_set never move, so handles stay valid as it grows.
  std::unordered_set<std::string, Hash, std::equal_to<>> strings;
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: handles outlive static destructors
  return *p;
}

}  // namespace

StringHandle intern(std::string_view bytes) {
  if (bytes.empty()) return nullptr;
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  auto it = p.strings.find(bytes);
  if (it == p.strings.end()) it = p.strings.emplace(bytes).first;
  return &*it;
}

std::string bytes_literal(std::string_view bytes) {
  const bool has_single = bytes.find('\'') != std::string_view::npos;
  const char quote = has_single && bytes.find('"') == std::string_view::npos ? '"' : '\'';
  std::string out = "b";
  out += quote;
  for (const char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == quote) {
      out += '\\';
      out += c;
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u >= 0x7f) {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

}  // namespace ag::detail
