#include "io/hf_config.h"

#include "core/error.h"

namespace tessera {

ModelSpec model_from_hf_config(const nlohmann::json&, const std::string&) {
  throw Error("model.architectures", "Hugging Face import not built yet", "");
}

}  // namespace tessera
