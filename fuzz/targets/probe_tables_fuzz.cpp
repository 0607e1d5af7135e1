// The probe's measurement tables (formats/sweep_table.h and the readers on it): the same text as an
// attention, a kernel, a collective sweep and a ranks.csv, each refusing only with an Error.
#include "formats/attention_sweep.h"
#include "formats/collective_sweep.h"
#include "formats/kernel_sweep.h"
#include "formats/probe_environment.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = tessera::fuzz::as_text(data, size);
  tessera::fuzz::refused_only_with_error([&] { (void)tessera::parse_attention_sweep(text, "attention.csv"); });
  tessera::fuzz::refused_only_with_error([&] { (void)tessera::parse_kernel_sweep(text, "kernels.csv"); });
  tessera::fuzz::refused_only_with_error([&] { (void)tessera::parse_collective_sweep(text, "collectives.csv"); });
  tessera::ProbeEnvironment world;
  world.world_size = world.nodes = 2;
  world.gpus_per_node = 1;
  return tessera::fuzz::refused_only_with_error([&] { tessera::check_probe_ranks(text, "ranks.csv", world); });
}
