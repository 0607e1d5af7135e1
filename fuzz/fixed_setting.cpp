#include "fixed_setting.h"

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"

namespace tessera::fuzz {

const ModelSpec& fuzz_model() {
  static const ModelSpec model = builtin_model("mixtral-8x7b");
  return model;
}

const Cluster& fuzz_cluster() {
  static const Cluster cluster = load_cluster("h100-sxm-80gb:64");
  return cluster;
}

}  // namespace tessera::fuzz
