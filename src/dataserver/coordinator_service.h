// The coordinator of the data service (issue 35) as a gRPC service: the TaskLedger
// (dataservice/task_ledger.h) behind one mutex, on the steady clock. Workers lease and complete
// tasks; a rank's Fetch waits up to its wait_s for the micro-batch at its position; every call
// first checks the caller's protocol version. Each cursor move rewrites the checkpoint file.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "data_service.grpc.pb.h"
#include "dataservice/epoch_plan.h"
#include "dataservice/task_ledger.h"
#include "formats/sample_index.h"

namespace tessera {

struct WorkerSettings {
  std::string tokenizer;  // SentencePiece model path
  std::string resize = "fixed:336";
  int patch = 14;
  bool skip_bad_samples = false;
};

struct CoordinatorSetup {
  std::string index_path;
  std::vector<IndexedSample> samples;
  EpochPlan plan;
  LedgerSettings ledger;
  std::vector<std::int64_t> cursors;  // resumed from a checkpoint, or empty
  WorkerSettings workers;
  std::string checkpoint_path;  // "" = none
};

class CoordinatorService final : public tessera::data::v1::DataService::Service {
 public:
  explicit CoordinatorService(CoordinatorSetup setup);

  grpc::Status Greet(grpc::ServerContext*, const tessera::data::v1::Hello*, tessera::data::v1::Welcome*) override;
  grpc::Status Lease(grpc::ServerContext*, const tessera::data::v1::LeaseRequest*, tessera::data::v1::Task*) override;
  grpc::Status Complete(grpc::ServerContext*, const tessera::data::v1::CompleteRequest*, tessera::data::v1::Ack*) override;
  grpc::Status Fail(grpc::ServerContext*, const tessera::data::v1::FailRequest*, tessera::data::v1::Ack*) override;
  grpc::Status Fetch(grpc::ServerContext*, const tessera::data::v1::FetchRequest*, tessera::data::v1::FetchReply*) override;
  grpc::Status Status(grpc::ServerContext*, const tessera::data::v1::StatusRequest*, tessera::data::v1::StatusReply*) override;

  // Blocks until every rank has fetched the end of the epoch, or the epoch failed.
  void wait_until_finished();
  bool failed() const;
  std::string error() const;
  std::int64_t leases_expired() const;

 private:
  double now_s() const;
  void save_checkpoint_locked();
  void fill_task(std::int64_t id, tessera::data::v1::Task* task) const;
  // A context-parallel trainer's shard of the micro-batch (skipped samples excluded: the ranges
  // are over the samples the batch holds).
  void fill_shard(int trainer, std::int64_t position, tessera::data::v1::FetchReply* reply) const;

  CoordinatorSetup setup_;
  TaskLedger ledger_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::int64_t completed_ = 0, duplicates_ = 0;
};

// "version 3 (worker w1) against the coordinator's 1": refused with FAILED_PRECONDITION.
grpc::Status check_protocol(std::uint32_t version, const std::string& who);

}  // namespace tessera
