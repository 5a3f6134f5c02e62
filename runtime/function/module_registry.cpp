// ag::Module identities and the registry of functions that traced each
// module: a destroyed module's traces are dropped from every such function.
#include "function/module_registry.h"

#include <atomic>
#include <map>
#include <mutex>
#include <set>

namespace ag {
namespace detail {
namespace {
std::atomic<uint64_t> g_next_module_id{1};

struct ModuleRegistry {
  std::mutex mu;
  std::map<uint64_t, std::set<FunctionCore*>> cores_by_module;
  static ModuleRegistry& get() {
    static ModuleRegistry* r = new ModuleRegistry;  // outlives static destructors
    return *r;
  }
};
}  // namespace

uint64_t module_id(const Module& m) {
  return m.module_id();
}

void add_module_user(uint64_t module_id, FunctionCore* core) {
  auto& r = ModuleRegistry::get();
  std::lock_guard lock(r.mu);
  r.cores_by_module[module_id].insert(core);
}

void remove_module_user(uint64_t module_id, FunctionCore* core) {
  auto& r = ModuleRegistry::get();
  std::lock_guard lock(r.mu);
  auto it = r.cores_by_module.find(module_id);
  if (it != r.cores_by_module.end()) it->second.erase(core);
}
}  // namespace detail

Module::Module() : id_(detail::g_next_module_id++) {}
Module::Module(const Module&) : id_(detail::g_next_module_id++) {}

Module::~Module() {
  auto& r = detail::ModuleRegistry::get();
  std::set<detail::FunctionCore*> cores;
  {
    std::lock_guard lock(r.mu);
    auto it = r.cores_by_module.find(id_);
    if (it == r.cores_by_module.end()) return;
    cores = std::move(it->second);
    r.cores_by_module.erase(it);
  }
  for (detail::FunctionCore* core : cores) core->drop_module(id_);
}

}  // namespace ag
