// Looks up what an ag::function's cache holds for given arguments, the way a
// call does (hash the trace types, then compare against the stored
// signatures), for tests that inspect the cached trace and plan.
#pragma once

#include <stdexcept>
#include <tuple>
#include <typeinfo>

#include <ag/ag.h>

#include "exec/plan.h"
#include "function/concrete.h"

namespace ag_test {

// The concrete function cached for `args`, or nullptr.
template <class F, class... Args>
const ag::detail::ConcreteCore* cached_concrete(const ag::PolymorphicFunction<F>& fn,
                                                const Args&... args) {
  namespace detail = ag::detail;
  detail::Hasher hasher;
  hasher.h = detail::mix(hasher.h, typeid(ag::Tensor).hash_code());
  (detail::visit_trace_type(hasher, args), ...);
  std::tuple<const Args&...> refs(args...);
  return fn.core()->find_exact(hasher.h, {&refs, &detail::match_args<Args...>});
}

// The plan the function's cache holds for `args`; throws (failing the test)
// when there is none.
template <class F, class... Args>
const ag::exec::Plan& plan_for(const ag::PolymorphicFunction<F>& fn, const Args&... args) {
  const ag::detail::ConcreteCore* concrete = cached_concrete(fn, args...);
  if (concrete == nullptr) throw std::logic_error("plan_for: no trace cached for these arguments");
  return *concrete->plan;
}

}  // namespace ag_test
