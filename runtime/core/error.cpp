#include "ag/error.h"

#include <string>

namespace ag {

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::InvalidArgument:
      return "InvalidArgumentError";
    case ErrorKind::Type:
      return "TypeError";
    case ErrorKind::Value:
      return "ValueError";
    case ErrorKind::FailedPrecondition:
      return "FailedPreconditionError";
    case ErrorKind::OutOfRange:
      return "OutOfRangeError";
    case ErrorKind::Unimplemented:
      return "UnimplementedError";
    case ErrorKind::Internal:
      return "InternalError";
  }
  return "Error";
}

Error::Error(ErrorKind kind, const std::string& message)
    : std::runtime_error(std::string(error_kind_name(kind)) + ": " + message),
      kind_(kind),
      message_(message) {}

}  // namespace ag
