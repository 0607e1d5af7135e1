// tessera::Error: the one exception type for invalid input. It names the offending field and the
// values that would have been accepted, so the CLI can print one actionable line and exit 2.
#pragma once

#include <stdexcept>
#include <string>

namespace tessera {

class Error : public std::runtime_error {
 public:
  Error(std::string field, std::string problem, std::string allowed)
      : std::runtime_error(compose(field, problem, allowed)),
        field_(std::move(field)),
        allowed_(std::move(allowed)) {}

  const std::string& field() const noexcept { return field_; }
  const std::string& allowed() const noexcept { return allowed_; }

 private:
  static std::string compose(const std::string& field, const std::string& problem,
                             const std::string& allowed) {
    std::string text = field + ": " + problem;
    if (!allowed.empty()) text += " (allowed: " + allowed + ")";
    return text;
  }
  std::string field_;
  std::string allowed_;
};

}  // namespace tessera
