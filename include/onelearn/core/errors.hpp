#pragma once
/**
 * \file
 * \ingroup core
 *
 * onelearn's exceptions. Every one says what was expected and what was found.
 *
 * Each concrete error derives from the standard exception a C++ user would catch
 * (std::invalid_argument for bad input, std::runtime_error for I/O and the environment) and
 * also from onelearn::error, so `catch (const onelearn::error&)` catches everything onelearn
 * throws. The `code()` lets a distributed policy carry an error from one rank to all the others
 * and rethrow it there with its type intact (see exec/propagate_errors.hpp).
 */

#include <stdexcept>
#include <string>

namespace onelearn {

enum class error_code {
  invalid_argument,  ///< a parameter or an input value is out of range (NaN, empty, unknown label)
  shape_error,       ///< shapes that must agree do not (rows of X and y, features, ranks)
  not_fitted,        ///< a fitted attribute or predict/transform was used before fit
  io_error,          ///< a file is missing, truncated, malformed or of an unsupported kind
  distributed,       ///< a collective failed or ranks disagree in a way that is not a shape
  runtime,           ///< anything else (a std::exception that is not onelearn's own)
};

/// Mixin base of every onelearn exception. Not derived from std::exception, so that the concrete
/// types have exactly one std::exception base and `catch (const std::exception&)` is unambiguous.
class error {
 public:
  virtual ~error() = default;
  [[nodiscard]] virtual error_code code() const noexcept = 0;
};

class invalid_argument : public std::invalid_argument, public error {
 public:
  using std::invalid_argument::invalid_argument;
  [[nodiscard]] error_code code() const noexcept override { return error_code::invalid_argument; }
};

class shape_error : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
  [[nodiscard]] error_code code() const noexcept override { return error_code::shape_error; }
};

/// Like scikit-learn's NotFittedError, a ValueError: here an invalid_argument.
class not_fitted_error : public invalid_argument {
 public:
  using invalid_argument::invalid_argument;
  [[nodiscard]] error_code code() const noexcept override { return error_code::not_fitted; }
};

class io_error : public std::runtime_error, public error {
 public:
  using std::runtime_error::runtime_error;
  [[nodiscard]] error_code code() const noexcept override { return error_code::io_error; }
};

class distributed_error : public std::runtime_error, public error {
 public:
  using std::runtime_error::runtime_error;
  [[nodiscard]] error_code code() const noexcept override { return error_code::distributed; }
};

/// Throws the exception type that `code` names. Used to rethrow on every rank an error that
/// one rank raised.
[[noreturn]] inline void throw_error(error_code code, const std::string& message) {
  switch (code) {
    case error_code::invalid_argument: throw invalid_argument(message);
    case error_code::shape_error: throw shape_error(message);
    case error_code::not_fitted: throw not_fitted_error(message);
    case error_code::io_error: throw io_error(message);
    case error_code::distributed: throw distributed_error(message);
    case error_code::runtime: break;
  }
  throw std::runtime_error(message);
}

}  // namespace onelearn
