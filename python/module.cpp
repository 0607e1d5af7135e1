// The _tessera extension module: tessera::Error becomes tessera.TesseraError (a ValueError, its
// message naming the field and the allowed values); each layer adds its bindings.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "core/error.h"

PYBIND11_MODULE(_tessera, m) {
  m.doc() = "Tessera: plan and predict LLM training; the data balancer and the goodput controller (see the tessera package)";
  pybind11::register_exception<tessera::Error>(m, "TesseraError", PyExc_ValueError);
  tessera::python::bind_balance(m);
  tessera::python::bind_adapt(m);
  tessera::python::bind_cli(m);
  tessera::python::bind_dataservice(m);
  // Further layers: tessera::python::bind_<layer>(m); (declared in bindings.h)
}
