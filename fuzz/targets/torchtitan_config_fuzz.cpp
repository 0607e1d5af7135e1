// torchtitan's printed config block ("Running with configs: {...}", formats/torchtitan_log.cpp): the
// input is the block's text, placed in a log with step lines around it, so the block's reader,
// its flattening and the times derived from it (world_size, tokens_per_train_step) are reached
// however the input is shaped; and the same text as a --torchtitan-config recipe.
#include "export/torchtitan_rules.h"
#include "fixed_setting.h"
#include "formats/log_plan.h"
#include "formats/training_log.h"
#include "fuzz_input.h"

namespace {

constexpr const char* kPrefix = "[rank0]:[titan] 2026-01-01 00:00:00,000 - root - INFO - ";

std::string log_around(const std::string& block) {
  std::string text = std::string(kPrefix) + "Running with configs: " + block + "\n";
  for (int step = 1; step <= 12; ++step)
    text += std::string(kPrefix) + "step: " + std::to_string(step) +
            "  loss: 5.0  memory: 30.5GiB(40.0%)  tps: 5,000  tflops: 300.0  mfu: 30.0%\n";
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string block = tessera::fuzz::as_text(data, size);
  tessera::fuzz::refused_only_with_error([&] {
    const tessera::TrainingLog log = tessera::parse_training_log(log_around(block), "fuzz.log", {65536, 8});
    (void)log.steady_iteration_time_s();
  });
  tessera::fuzz::refused_only_with_error([&] {
    const tessera::TorchtitanJob job = tessera::parse_torchtitan_job(block, "");
    (void)tessera::plan_from_torchtitan_job(job, tessera::fuzz::fuzz_model(), tessera::fuzz::fuzz_cluster());
  });
  return 0;
}
