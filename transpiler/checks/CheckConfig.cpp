#include "checks/CheckConfig.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace agc {
namespace {

// The keys of .agc.yaml; unknown keys are ignored.
struct ConfigKeys {
  std::optional<std::string> checks;
  std::optional<std::string> warningsAsErrors;
};

}  // namespace
}  // namespace agc

template <>
struct llvm::yaml::MappingTraits<agc::ConfigKeys> {
  static void mapping(IO& io, agc::ConfigKeys& keys) {
    io.mapOptional("Checks", keys.checks);
    io.mapOptional("WarningsAsErrors", keys.warningsAsErrors);
  }
};

namespace agc {

const CheckConfig& checkConfigFor(llvm::StringRef directory) {
  static std::map<std::string, CheckConfig> cache;
  auto [entry, inserted] = cache.try_emplace(directory.str());
  if (!inserted) return entry->second;
  CheckConfig& config = entry->second;
  llvm::SmallString<256> candidate(directory);
  llvm::sys::path::append(candidate, ".agc.yaml");
  if (!llvm::sys::fs::exists(candidate)) {
    llvm::StringRef parent = llvm::sys::path::parent_path(directory);
    if (!parent.empty() && parent != directory) config = checkConfigFor(parent);
    return config;
  }
  config.path = candidate.str().str();
  auto buffer = llvm::MemoryBuffer::getFile(candidate);
  if (!buffer) {
    config.error = "cannot read '" + config.path + "': " + buffer.getError().message();
    return config;
  }
  std::string yamlError;
  llvm::yaml::Input input((*buffer)->getBuffer(), nullptr,
                          [](const llvm::SMDiagnostic& d, void* out) {
                            llvm::raw_string_ostream os(*static_cast<std::string*>(out));
                            d.print(nullptr, os, /*ShowColors=*/false);
                          },
                          &yamlError);
  input.setAllowUnknownKeys(true);
  if ((*buffer)->getBuffer().trim().empty()) return config;
  ConfigKeys keys;
  input >> keys;
  if (input.error()) {
    config.error = "cannot parse '" + config.path + "'" +
                   (yamlError.empty() ? std::string() : ":\n" + yamlError);
    return config;
  }
  config.checks = keys.checks;
  config.warningsAsErrors = keys.warningsAsErrors;
  return config;
}

}  // namespace agc
