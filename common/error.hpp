// Errors that carry their category; only cmd/ turns a category into an exit code.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace cb {

// The process exit codes; every other place names these.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitValidation = 3;
inline constexpr int kExitTimeout = 4;
inline constexpr int kExitRegression = 5;
inline constexpr int kExitInconclusive = 6;

enum class ErrorKind {
  Usage,       // bad flag, value, name or input file: exit 2
  Runtime,     // a library call failed, a rank died: exit 1
  Validation,  // a result had wrong elements: exit 3
  Timeout,     // the watchdog fired: exit 4
  Regression,  // compare found a regression / check a failed requirement: exit 5
  Inconclusive,  // compare cannot judge: the machine differed between the sides: exit 6
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

int exit_code(ErrorKind kind);

// A message as one line: its line ends turned into spaces (an error line on stderr, a field of a
// line-based wire message).
std::string one_line(std::string text);

template <typename... Args>
[[noreturn]] void fail(ErrorKind kind, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(kind, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void usage_error(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(ErrorKind::Usage, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void runtime_error(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(ErrorKind::Runtime, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace cb
