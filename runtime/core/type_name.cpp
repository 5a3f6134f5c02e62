// type_name: the demangled name of a type (the mangled one where demangling fails).
#include "core/type_name.h"

#include <cxxabi.h>

#include <cstdlib>

namespace ag::detail {

std::string type_name(const std::type_info& type) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : type.name();
  std::free(demangled);
  return name;
}

}  // namespace ag::detail
