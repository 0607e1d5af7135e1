#include "report/megatron_args_json.h"

#include "core/error.h"
#include "export/megatron_launch.h"

namespace tessera {

void add_megatron_args(nlohmann::json& entry, const ModelSpec& model, const Plan& plan, const Workload& workload) {
  try {
    entry["megatron_args"] = megatron_args(model, plan, workload);
  } catch (const Error& e) {
    entry["megatron_args"] = nullptr;
    entry["megatron_error"] = e.what();
  }
}

std::string megatron_command_or_reason(const ModelSpec& model, const Plan& plan, const Workload& workload) {
  try {
    return megatron_command_line(model, plan, workload);
  } catch (const Error& e) {
    return std::string("(not expressible in Megatron-LM: ") + e.what() + ")";
  }
}

}  // namespace tessera
