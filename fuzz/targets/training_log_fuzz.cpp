// Megatron-LM / torchtitan training logs (formats/training_log.h), then the plan and model a Megatron
// log's argument dump describes (formats/log_plan.h) and its steady iteration time.
#include "fixed_setting.h"
#include "formats/log_plan.h"
#include "formats/training_log.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error([&] {
    const tessera::TrainingLog log = tessera::parse_training_log(tessera::fuzz::as_text(data, size), "fuzz.log");
    (void)log.steady_iteration_time_s();
    if (log.format == "megatron-lm" && !log.arguments.empty()) {
      (void)tessera::model_from_megatron_log(log, "fuzz");
      (void)tessera::plan_from_megatron_log(log, tessera::fuzz::fuzz_model(), tessera::fuzz::fuzz_cluster());
    }
  });
}
