#include "dataserver/coordinator_server.h"

#include <chrono>
#include <memory>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "core/error.h"
#include "dataserver/message_size.h"

namespace tessera {

namespace {
// Longer than a worker's pause between polls (dataserver/worker_loop.h poll_s) many times over.
constexpr double kShutdownGraceS = 0.25;

std::string host_of(const std::string& listen) { return listen.substr(0, listen.rfind(':')); }
}  // namespace

CoordinatorRun run_coordinator(CoordinatorSetup setup, const std::string& listen,
                               const std::function<void(std::string_view)>& announce) {
  if (listen.rfind(':') == std::string::npos) throw Error("--listen", "got '" + listen + "'", "HOST:PORT, e.g. 127.0.0.1:0");
  CoordinatorService service(std::move(setup));
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  builder.RegisterService(&service);
  const std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) throw Error("--listen", "cannot listen on " + listen, "a free HOST:PORT on this machine");
  announce("listening on " + host_of(listen) + ":" + std::to_string(port) + "\n");
  service.wait_until_finished();
  CoordinatorRun run;
  run.failed = service.failed();
  run.error = service.error();
  run.leases_expired = service.leases_expired();
  // Workers polling for work learn the epoch is over (Lease answers epoch_over) before the port
  // closes, instead of retrying a closed port; trainers' last calls finish within the deadline.
  std::this_thread::sleep_for(std::chrono::duration<double>(kShutdownGraceS));
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return run;
}

}  // namespace tessera
