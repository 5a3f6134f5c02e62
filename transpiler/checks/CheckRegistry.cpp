#include "checks/CheckRegistry.h"

#include "checks/CheckHeaders.h"  // generated from Checks.def
#include "checks/CheckOutput.h"

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

std::vector<CheckInfo> registeredChecks() {
  std::vector<CheckInfo> out;
  for (const CheckFactory& factory : checkFactories())
    out.push_back({factory.name, factory.summary});
  return out;
}

}  // namespace agc
