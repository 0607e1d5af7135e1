// Runs the coordinator (dataserver/coordinator_service.h) on a gRPC server until the epoch ends:
// every rank has fetched its end of epoch, or a task failed.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "dataserver/coordinator_service.h"

namespace tessera {

struct CoordinatorRun {
  bool failed = false;
  std::string error;
  std::int64_t leases_expired = 0;
};

// `listen` is HOST:PORT (port 0 picks a free one); `announce` gets "listening on HOST:PORT\n" once
// the server accepts calls. Throws Error("--listen", ...) when the address cannot be bound.
CoordinatorRun run_coordinator(CoordinatorSetup setup, const std::string& listen,
                               const std::function<void(std::string_view)>& announce);

}  // namespace tessera
