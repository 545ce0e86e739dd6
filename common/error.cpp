#include "common/error.hpp"

namespace cb {

int exit_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Usage:
      return kExitUsage;
    case ErrorKind::Runtime:
      return kExitRuntime;
    case ErrorKind::Validation:
      return kExitValidation;
    case ErrorKind::Timeout:
      return kExitTimeout;
    case ErrorKind::Regression:
      return kExitRegression;
    case ErrorKind::Inconclusive:
      return kExitInconclusive;
  }
  return kExitRuntime;
}

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace cb
