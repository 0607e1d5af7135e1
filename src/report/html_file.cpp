#include "report/html_file.h"

#include <fstream>

#include "core/error.h"

namespace tessera {

void write_html_file(const std::string& path, const std::string& html) {
  const std::string allowed = "a writable file path, e.g. report.html";
  if (path.empty()) throw Error("--html", "empty path", allowed);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("--html", "cannot open '" + path + "' for writing", allowed);
  out << html;
  out.flush();
  if (!out) throw Error("--html", "writing '" + path + "' failed", allowed + " with free space");
}

}  // namespace tessera
