#include "report/error.hpp"

namespace cb {

int exit_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Usage:
      return 2;
    case ErrorKind::Runtime:
      return 1;
    case ErrorKind::Validation:
      return 3;
    case ErrorKind::Timeout:
      return 4;
    case ErrorKind::Regression:
      return 5;
  }
  return 1;
}

}  // namespace cb
