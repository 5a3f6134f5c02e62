#include "checks/CheckRegistry.h"

#include "checks/AllChecks.h"

namespace agc {

namespace {

template <class Check>
std::unique_ptr<AgCheck> create(llvm::StringRef name, clang::DiagnosticsEngine& engine,
                                const CheckScope& scope) {
  return std::make_unique<Check>(name, engine, scope);
}

const CheckFactory kFactories[] = {
#define AG_CHECK(Class, name, summary) {name, summary, &create<Class>},
#include "checks/Checks.def"
#undef AG_CHECK
};

}  // namespace

llvm::ArrayRef<CheckFactory> checkFactories() {
  return kFactories;
}

}  // namespace agc
