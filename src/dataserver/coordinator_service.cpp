#include "dataserver/coordinator_service.h"

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "dataserver/coordinator_checkpoint.h"
#include "dataservice/context_parallel_shard.h"

namespace tessera {

namespace pb = tessera::data::v1;

namespace {
// The longest a Fetch may be held open: long polls shorter than gRPC's default keepalive.
constexpr double kMaxFetchWaitS = 10.0;
}  // namespace

grpc::Status check_protocol(std::uint32_t version, const std::string& who) {
  if (version == pb::PROTOCOL_VERSION) return grpc::Status::OK;
  return {grpc::StatusCode::FAILED_PRECONDITION,
          "protocol_version: " + who + " speaks version " + std::to_string(version) + " (allowed: " +
              std::to_string(static_cast<int>(pb::PROTOCOL_VERSION)) + ", the coordinator's)"};
}

CoordinatorService::CoordinatorService(CoordinatorSetup setup)
    : setup_(std::move(setup)), ledger_(setup_.plan, setup_.ledger, setup_.cursors) {}

double CoordinatorService::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void CoordinatorService::save_checkpoint_locked() {
  if (setup_.checkpoint_path.empty()) return;
  write_coordinator_checkpoint(setup_.checkpoint_path, {setup_.index_path, setup_.plan.settings, ledger_.cursors()});
}

grpc::Status CoordinatorService::Greet(grpc::ServerContext*, const pb::Hello* hello, pb::Welcome* out) {
  if (auto s = check_protocol(hello->protocol_version(), hello->role() + " " + hello->name()); !s.ok()) return s;
  const EpochSettings& e = setup_.plan.settings;
  out->set_protocol_version(pb::PROTOCOL_VERSION);
  out->set_ranks(e.trainer_ranks());
  out->set_context_parallel(e.context_parallel);
  out->set_microbatches(e.microbatches);
  out->set_per_rank(setup_.plan.per_rank);
  out->set_epoch(e.epoch);
  out->set_seed(e.seed);
  out->set_samples(static_cast<std::int64_t>(setup_.samples.size()));
  out->set_tokenizer(setup_.workers.tokenizer);
  out->set_resize(setup_.workers.resize);
  out->set_patch(setup_.workers.patch);
  out->set_skip_bad_samples(setup_.workers.skip_bad_samples);
  return grpc::Status::OK;
}

void CoordinatorService::fill_task(std::int64_t id, pb::Task* task) const {
  const MicroBatchTask& t = setup_.plan.tasks[static_cast<std::size_t>(id)];
  task->set_task_id(id);
  task->set_rank(t.rank);
  task->set_position(t.position);
  task->set_step(t.step);
  task->set_microbatch(t.microbatch);
  for (std::int64_t sample : t.samples) {
    const IndexedSample& s = setup_.samples[static_cast<std::size_t>(sample)];
    pb::SampleRef* ref = task->add_samples();
    ref->set_id(sample);
    ref->set_text_path(s.text_path);
    for (const std::string& p : s.image_paths) ref->add_image_paths(p);
    ref->set_text_tokens(s.tokens.text_tokens.empty() ? 0 : s.tokens.text_tokens.front());
    for (std::int64_t n : s.tokens.image_tokens) ref->add_image_tokens(n);
  }
}

void CoordinatorService::fill_shard(int trainer, std::int64_t position, pb::FetchReply* reply) const {
  const int cp = setup_.plan.settings.context_parallel;
  if (cp == 1) return;
  const MicroBatchTask& t = setup_.plan.at(trainer / cp, position);
  std::vector<std::int64_t> tokens;
  for (std::int64_t id : reply->batch().sample_ids()) tokens.push_back(setup_.samples[static_cast<std::size_t>(id)].tokens.backbone_tokens());
  reply->set_cp_rank(trainer % cp);
  reply->set_cp_sharding(to_string(t.cp_sharding));
  for (const auto& [begin, end] : cp_shard_ranges(tokens, cp, trainer % cp, t.cp_sharding)) {
    reply->add_cp_range_begin(begin);
    reply->add_cp_range_end(end);
  }
}

grpc::Status CoordinatorService::Lease(grpc::ServerContext*, const pb::LeaseRequest* request, pb::Task* task) {
  if (auto s = check_protocol(request->protocol_version(), "worker " + request->worker()); !s.ok()) return s;
  std::lock_guard lock(mutex_);
  ledger_.expire(now_s());
  if (ledger_.finished() || !ledger_.error().empty()) {
    task->set_epoch_over(true);
    return grpc::Status::OK;
  }
  const auto id = ledger_.lease(request->worker(), now_s());
  if (!id) {
    task->set_none(true);
    return grpc::Status::OK;
  }
  fill_task(*id, task);
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::Complete(grpc::ServerContext*, const pb::CompleteRequest* request, pb::Ack* ack) {
  if (auto s = check_protocol(request->protocol_version(), "worker " + request->worker()); !s.ok()) return s;
  std::string payload;
  request->batch().SerializeToString(&payload);
  std::lock_guard lock(mutex_);
  const std::int64_t id = request->batch().task_id();
  if (id < 0 || id >= static_cast<std::int64_t>(setup_.plan.tasks.size()))
    return {grpc::StatusCode::INVALID_ARGUMENT, "task_id: no such task (allowed: a leased task)"};
  const bool accepted = ledger_.complete(id, std::move(payload));
  (accepted ? completed_ : duplicates_) += 1;
  ack->set_accepted(accepted);
  changed_.notify_all();
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::Fail(grpc::ServerContext*, const pb::FailRequest* request, pb::Ack* ack) {
  if (auto s = check_protocol(request->protocol_version(), "worker " + request->worker()); !s.ok()) return s;
  std::lock_guard lock(mutex_);
  ledger_.fail(request->task_id(), request->error());
  ack->set_accepted(true);
  changed_.notify_all();
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::Fetch(grpc::ServerContext* context, const pb::FetchRequest* request, pb::FetchReply* reply) {
  if (auto s = check_protocol(request->protocol_version(), "trainer rank " + std::to_string(request->rank())); !s.ok())
    return s;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(std::clamp(request->wait_s(), 0.0, kMaxFetchWaitS));
  std::unique_lock lock(mutex_);
  try {
    const std::vector<std::int64_t> before = ledger_.cursors();
    for (;;) {
      const std::string* payload = nullptr;
      const FetchStatus status = ledger_.fetch(request->rank(), request->position(), &payload);
      if (ledger_.cursors() != before) {
        save_checkpoint_locked();
        changed_.notify_all();
      }
      if (status == FetchStatus::ready) {
        reply->set_ready(true);
        reply->mutable_batch()->ParseFromString(*payload);
        fill_shard(request->rank(), request->position(), reply);
        return grpc::Status::OK;
      }
      if (status == FetchStatus::end_of_epoch) {
        reply->set_end_of_epoch(true);
        return grpc::Status::OK;
      }
      if (status == FetchStatus::failed) {
        reply->set_error(ledger_.error());
        return grpc::Status::OK;
      }
      if (context->IsCancelled() || changed_.wait_until(lock, deadline) == std::cv_status::timeout) return grpc::Status::OK;
    }
  } catch (const Error& e) {
    return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  }
}

grpc::Status CoordinatorService::Status(grpc::ServerContext*, const pb::StatusRequest*, pb::StatusReply* reply) {
  std::lock_guard lock(mutex_);
  for (std::int64_t c : ledger_.cursors()) reply->add_cursors(c);
  reply->set_stored_results(static_cast<std::int64_t>(ledger_.stored_results()));
  reply->set_stored_bytes(static_cast<std::int64_t>(ledger_.stored_bytes()));
  reply->set_leases_expired(ledger_.leases_expired());
  reply->set_completed(completed_);
  reply->set_duplicates_dropped(duplicates_);
  reply->set_error(ledger_.error());
  reply->set_finished(ledger_.finished());
  return grpc::Status::OK;
}

void CoordinatorService::wait_until_finished() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return ledger_.finished() || !ledger_.error().empty(); });
}

bool CoordinatorService::failed() const {
  std::lock_guard lock(mutex_);
  return !ledger_.error().empty();
}

std::string CoordinatorService::error() const {
  std::lock_guard lock(mutex_);
  return ledger_.error();
}

}  // namespace tessera

namespace tessera {

std::int64_t CoordinatorService::leases_expired() const {
  std::lock_guard lock(mutex_);
  return ledger_.leases_expired();
}

}  // namespace tessera
