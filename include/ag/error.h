// Errors. Every failure the library reports is an `ag::Error` with a kind;
// each kind has its own subclass so callers can catch just that one.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace ag {

enum class ErrorKind {
  InvalidArgument,     // a bad value or shape passed to an op
  Type,                // a call that does not fit a signature
  Value,               // a value that the function cannot use
  FailedPrecondition,  // the program is in the wrong state for the call
  OutOfRange,          // an index out of bounds
  Unimplemented,       // a combination we do not support
  NotFound,            // a file (or an entry of one) that is not there
  DataLoss,            // a file whose contents are damaged
  Internal,            // a bug in autograph-cpp
};

std::string_view error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message);
  ErrorKind kind() const { return kind_; }
  // The message without the "InvalidArgumentError: " prefix that what() has.
  const std::string& message() const { return message_; }

 private:
  ErrorKind kind_;
  std::string message_;
};

#define AG_DEFINE_ERROR(Name, Kind)                                                \
  class Name : public Error {                                                      \
   public:                                                                         \
    explicit Name(const std::string& message) : Error(ErrorKind::Kind, message) {} \
  };
AG_DEFINE_ERROR(InvalidArgumentError, InvalidArgument)
AG_DEFINE_ERROR(TypeError, Type)
AG_DEFINE_ERROR(ValueError, Value)
AG_DEFINE_ERROR(FailedPreconditionError, FailedPrecondition)
AG_DEFINE_ERROR(OutOfRangeError, OutOfRange)
AG_DEFINE_ERROR(UnimplementedError, Unimplemented)
AG_DEFINE_ERROR(NotFoundError, NotFound)
AG_DEFINE_ERROR(DataLossError, DataLoss)
AG_DEFINE_ERROR(InternalError, Internal)
#undef AG_DEFINE_ERROR

namespace detail {
// Throws the subclass of Error that `kind` names (to rethrow an error with
// more context).
[[noreturn]] void throw_error(ErrorKind kind, const std::string& message);
}  // namespace detail

}  // namespace ag
