// Python bindings of the command line (cli/command_line.h): _tessera._run(args) runs one tessera
// command in-process and returns (exit status, stdout text, stderr text), which tessera.plan /
// estimate / validate (python/tessera/cli_api.py) turn into the --json documents; __version__.
#include <string>
#include <tuple>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "cli/command_line.h"

namespace tessera::python {

namespace py = pybind11;

void bind_cli(py::module_& m) {
  m.def(
      "_run",
      [](const std::vector<std::string>& args) {
        std::string out, err;
        int code = 0;
        {
          // A plan search takes seconds on its own threads; other Python threads run meanwhile.
          // Each call builds its own App and output, so concurrent calls share nothing here.
          py::gil_scoped_release release;
          code = cli::run_tessera(args, out, err);
        }
        return std::make_tuple(code, py::bytes(out), py::bytes(err));
      },
      py::arg("args"),
      "Run `tessera ARGS...` in-process: (exit status, stdout bytes, stderr bytes); 2 means bad input, "
      "one 'error: ...' line on stderr.");
  m.def("version_text", &cli::version_text, "The version with the git commit, as `tessera --version` prints it");
  m.attr("__version__") = cli::project_version();
}

}  // namespace tessera::python
