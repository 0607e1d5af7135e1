#include "dataserver/worker_loop.h"

#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "core/error.h"
#include "data_service.grpc.pb.h"
#include "dataserver/message_size.h"
#include "dataservice/microbatch_builder.h"

namespace tessera {

namespace pb = tessera::data::v1;

namespace {

struct Connection {
  std::unique_ptr<pb::DataService::Stub> stub;
  std::uint32_t version = pb::PROTOCOL_VERSION;
  std::string name;
};

Connection connect(const WorkerOptions& o) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  Connection c;
  c.stub = pb::DataService::NewStub(grpc::CreateCustomChannel(o.coordinator, grpc::InsecureChannelCredentials(), args));
  c.version = o.protocol_version != 0 ? o.protocol_version : static_cast<std::uint32_t>(pb::PROTOCOL_VERSION);
  c.name = o.name;
  return c;
}

// Retries a call while the coordinator is unreachable (restarting), up to reconnect_s.
template <typename Call>
grpc::Status with_retries(const WorkerOptions& o, Call call) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.reconnect_s);
  for (;;) {
    const grpc::Status s = call();
    if (s.error_code() != grpc::StatusCode::UNAVAILABLE || std::chrono::steady_clock::now() >= give_up) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void require_ok(const grpc::Status& s, const std::string& what) {
  if (s.ok()) return;
  if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION) throw Error("protocol_version", s.error_message(), "a worker of the coordinator's version");
  throw Error("--coordinator", what + ": " + s.error_message(), "a running coordinator (tessera data-serve coordinator)");
}

BuildSettings build_settings(const pb::Welcome& w, std::optional<TextTokenizer>& tokenizer) {
  BuildSettings b;
  b.resize = parse_resize_policy(w.resize(), w.patch());
  b.skip_bad_samples = w.skip_bad_samples();
  if (!w.tokenizer().empty()) {
    tokenizer.emplace(TextTokenizer::load(w.tokenizer()));
    b.tokenizer = &*tokenizer;
  }
  return b;
}

std::vector<TaskSample> task_samples(const pb::Task& task) {
  std::vector<TaskSample> out;
  for (const pb::SampleRef& ref : task.samples()) {
    TaskSample t;
    t.id = ref.id();
    t.sample.text_path = ref.text_path();
    if (!ref.text_path().empty()) t.sample.tokens.text_tokens = {ref.text_tokens()};
    for (const std::string& p : ref.image_paths()) t.sample.image_paths.push_back(p);
    for (std::int64_t n : ref.image_tokens()) t.sample.tokens.image_tokens.push_back(n);
    out.push_back(std::move(t));
  }
  return out;
}

void fill_batch(const pb::Task& task, const BuiltMicroBatch& b, int patch, pb::MicroBatch* out) {
  out->set_task_id(task.task_id());
  out->set_rank(task.rank());
  out->set_position(task.position());
  out->set_step(task.step());
  out->set_microbatch(task.microbatch());
  out->mutable_sample_ids()->Add(b.sample_ids.begin(), b.sample_ids.end());
  out->mutable_token_ids()->Add(b.token_ids.begin(), b.token_ids.end());
  out->mutable_text_lengths()->Add(b.text_lengths.begin(), b.text_lengths.end());
  out->mutable_image_sample()->Add(b.image_sample.begin(), b.image_sample.end());
  out->mutable_image_rows()->Add(b.image_rows.begin(), b.image_rows.end());
  out->mutable_image_cols()->Add(b.image_cols.begin(), b.image_cols.end());
  out->set_patch(patch);
  out->set_patches(b.patches.data(), b.patches.size());
  out->mutable_skipped_sample_ids()->Add(b.skipped.begin(), b.skipped.end());
  for (const std::string& r : b.skipped_reasons) out->add_skipped_reasons(r);
}

// Builds one task and hands it back (or fails it, naming the bad sample).
void build_and_return(const Connection& c, const WorkerOptions& o, const pb::Task& task, const BuildSettings& settings,
                      WorkerReport& report) {
  try {
    const BuiltMicroBatch built = build_microbatch(task_samples(task), settings);
    pb::CompleteRequest request;
    request.set_protocol_version(c.version);
    request.set_worker(c.name);
    fill_batch(task, built, settings.resize.patch, request.mutable_batch());
    pb::Ack ack;
    require_ok(with_retries(o, [&] {
                 grpc::ClientContext context;
                 return c.stub->Complete(&context, request, &ack);
               }),
               "Complete");
    (ack.accepted() ? report.built : report.dropped) += 1;
  } catch (const Error& e) {
    if (e.field() == "--coordinator" || e.field() == "protocol_version") throw;
    pb::FailRequest request;
    request.set_protocol_version(c.version);
    request.set_worker(c.name);
    request.set_task_id(task.task_id());
    request.set_error(e.field() + ": " + e.problem());  // the coordinator adds what is allowed
    pb::Ack ack;
    grpc::ClientContext context;
    require_ok(c.stub->Fail(&context, request, &ack), "Fail");
    ++report.failed;
  }
}

}  // namespace

WorkerReport run_worker(const WorkerOptions& o) {
  const Connection c = connect(o);
  pb::Hello hello;
  hello.set_protocol_version(c.version);
  hello.set_role("worker");
  hello.set_name(o.name);
  pb::Welcome welcome;
  require_ok(with_retries(o, [&] {
               grpc::ClientContext context;
               return c.stub->Greet(&context, hello, &welcome);
             }),
             "Greet");
  std::optional<TextTokenizer> tokenizer;
  const BuildSettings settings = build_settings(welcome, tokenizer);
  WorkerReport report;
  pb::LeaseRequest lease;
  lease.set_protocol_version(c.version);
  lease.set_worker(o.name);
  for (;;) {
    pb::Task task;
    require_ok(with_retries(o, [&] {
                 grpc::ClientContext context;
                 return c.stub->Lease(&context, lease, &task);
               }),
               "Lease");
    if (task.epoch_over()) return report;
    if (task.none()) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o.poll_s));
      continue;
    }
    build_and_return(c, o, task, settings, report);
  }
}

}  // namespace tessera
