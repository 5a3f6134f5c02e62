// The functions agc made for marked free functions, by the address of the
// function: what ag::function_of(f) looks up.
#include <memory>
#include <mutex>
#include <unordered_map>

#include "ag/function.h"

namespace ag::detail {
namespace {
struct MarkedRegistry {
  std::mutex mu;
  std::unordered_map<const void*, std::shared_ptr<FunctionCore>> cores;
  static MarkedRegistry& get() {
    static MarkedRegistry* r = new MarkedRegistry;  // outlives static destructors
    return *r;
  }
};
}  // namespace

void register_marked(const void* address, std::shared_ptr<FunctionCore> core) {
  auto& r = MarkedRegistry::get();
  std::lock_guard lock(r.mu);
  r.cores[address] = std::move(core);
}

std::shared_ptr<FunctionCore> find_marked(const void* address) {
  auto& r = MarkedRegistry::get();
  std::lock_guard lock(r.mu);
  auto it = r.cores.find(address);
  return it == r.cores.end() ? nullptr : it->second;
}

}  // namespace ag::detail
