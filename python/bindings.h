// The pieces of the _tessera extension, one function per layer, each defined in its own
// python/<layer>_bindings.cpp (python/CMakeLists.txt compiles every python/*.cpp). To add a layer:
// declare bind_<layer> here, define it in its file, and call it from module.cpp.
#pragma once

#include <pybind11/pybind11.h>

namespace tessera::python {

void bind_balance(pybind11::module_& m);  // python/balance_bindings.cpp
void bind_adapt(pybind11::module_& m);    // python/adapt_bindings.cpp
void bind_cli(pybind11::module_& m);      // python/cli_bindings.cpp
void bind_dataservice(pybind11::module_& m);  // python/dataservice_bindings.cpp

}  // namespace tessera::python
