// Where the runtime's warnings and debug messages go (ag::set_log_hook,
// ag::set_log_level). Internal to the runtime.
#pragma once

#include <string>

#include "ag/function.h"

namespace ag::detail {

// Sends `message` to the log hook (stderr by default) if `level` is enabled.
void log_message(LogLevel level, const std::string& message);

}  // namespace ag::detail
