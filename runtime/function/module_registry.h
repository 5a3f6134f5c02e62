// Which functions hold traces of which ag::Module, so that destroying a module
// drops its traces. Internal to the runtime.
#pragma once

#include <cstdint>

#include "ag/function.h"

namespace ag::detail {

// `core` traced a call with module `module_id` as an argument.
void add_module_user(uint64_t module_id, FunctionCore* core);
// `core` is being destroyed: the module no longer needs to tell it.
void remove_module_user(uint64_t module_id, FunctionCore* core);

}  // namespace ag::detail
