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
    case ErrorKind::NotFound:
      return "NotFoundError";
    case ErrorKind::DataLoss:
      return "DataLossError";
    case ErrorKind::Internal:
      return "InternalError";
  }
  return "Error";
}

Error::Error(ErrorKind kind, const std::string& message)
    : std::runtime_error(std::string(error_kind_name(kind)) + ": " + message),
      kind_(kind),
      message_(message) {}

namespace detail {
void throw_error(ErrorKind kind, const std::string& message) {
  switch (kind) {
    case ErrorKind::InvalidArgument:
      throw InvalidArgumentError(message);
    case ErrorKind::Type:
      throw TypeError(message);
    case ErrorKind::Value:
      throw ValueError(message);
    case ErrorKind::FailedPrecondition:
      throw FailedPreconditionError(message);
    case ErrorKind::OutOfRange:
      throw OutOfRangeError(message);
    case ErrorKind::Unimplemented:
      throw UnimplementedError(message);
    case ErrorKind::NotFound:
      throw NotFoundError(message);
    case ErrorKind::DataLoss:
      throw DataLossError(message);
    case ErrorKind::Internal:
      break;
  }
  throw InternalError(message);
}
}  // namespace detail

}  // namespace ag
