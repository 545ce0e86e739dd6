// Gloo reports failures as C++ exceptions (EnforceNotMet, IoException, ...). Every call into
// Gloo goes through guarded(), which turns them into runtime Errors naming the operation.
#pragma once

#include <gloo/common/error.h>
#include <gloo/common/logging.h>

#include <string>
#include <string_view>
#include <utility>

#include "common/error.hpp"

namespace cb::gloo_backend {

// Gloo's messages start with "[file.cc:123] "; keep only what a user can act on.
std::string clean_gloo_message(std::string_view what);

template <typename F>
decltype(auto) guarded(std::string_view operation, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const ::gloo::IoException& e) {
    runtime_error("Gloo {} failed (I/O): {}", operation, clean_gloo_message(e.what()));
  } catch (const ::gloo::EnforceNotMet& e) {
    runtime_error("Gloo {} failed: {}", operation, clean_gloo_message(e.what()));
  } catch (const ::gloo::Exception& e) {
    runtime_error("Gloo {} failed: {}", operation, clean_gloo_message(e.what()));
  }
}

}  // namespace cb::gloo_backend
