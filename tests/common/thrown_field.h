// The field a tessera::Error names, for tests of bad input.
#pragma once

#include <string>

#include "core/error.h"

namespace tessera::testing {

// Returns the field of the Error `fn` throws, or "<no error>".
template <typename Fn>
std::string thrown_field(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.field();
  }
  return "<no error>";
}

}  // namespace tessera::testing
