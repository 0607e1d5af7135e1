// A preprocessing worker of the data service (issue 35): greets the coordinator (same protocol
// version, or a clear error), takes the build settings it announces (tokenizer, resize policy,
// patch, whether to skip bad samples), then leases tasks, builds each micro-batch
// (dataservice/microbatch_builder.h) and hands it back, until the coordinator says the epoch is
// over. A sample that cannot be built fails its task with the error naming the sample. Holds one
// task at a time: its memory is one micro-batch.
#pragma once

#include <cstdint>
#include <string>

namespace tessera {

struct WorkerOptions {
  std::string coordinator;      // HOST:PORT
  std::string name = "worker";
  double poll_s = 0.02;         // pause when there is nothing to build
  double reconnect_s = 30.0;    // how long an unreachable coordinator is retried (a restart)
  std::uint32_t protocol_version = 0;  // 0: this build's; tests set another to see it refused
};

struct WorkerReport {
  std::int64_t built = 0;      // micro-batches accepted
  std::int64_t dropped = 0;    // built but already done by another worker
  std::int64_t failed = 0;     // tasks failed (bad samples)
};

// Throws Error("--coordinator", ...) when the coordinator cannot be reached or refuses the worker.
WorkerReport run_worker(const WorkerOptions& options);

}  // namespace tessera
