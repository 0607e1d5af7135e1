// Chrome Trace Event export of a simulated pipeline: the document parses as JSON and holds exactly
// one complete event per operation (p m 2 for 1F1B and GPipe, x v interleaved, p m 3 for ZB-H1) on
// its stage's track, named F / B / W with stage, chunk and micro-batch in args, at the timeline's
// times in microseconds; p2p and dp-sync events exactly when their times are positive; no two events
// of one track overlap (Perfetto would drop them); and the file on disk is the same document.
#include "report/chrome_trace.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "schedule/pipeline_simulator.h"

namespace tessera {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

struct Case {
  Schedule schedule;
  int p, m, v;
  std::size_t ops_per_chunk_mb;
};

const Case kCases[] = {{Schedule::gpipe, 4, 8, 1, 2},
                       {Schedule::one_f_one_b, 4, 8, 1, 2},
                       {Schedule::one_f_one_b, 3, 5, 1, 2},
                       {Schedule::interleaved, 4, 8, 2, 2},
                       {Schedule::interleaved, 2, 6, 3, 2},
                       {Schedule::zb_h1, 4, 8, 1, 3},
                       {Schedule::zb_h1, 1, 3, 1, 3}};

// Uneven costs so events differ; p2p and DP sync as asked.
PipelineCosts costs_for(const Case& k, double p2p, double sync) {
  auto c = PipelineCosts::uniform(k.schedule, k.p, k.m, k.v, 1.0, 1.5, 0.5);
  for (std::size_t i = 0; i < c.forward_s.size(); ++i) {
    c.forward_s[i] *= 1.0 + 0.1 * static_cast<double>(i % 7);
    c.backward_s[i] *= 1.0 + 0.05 * static_cast<double>(i % 5);
  }
  c.p2p_s.assign(static_cast<std::size_t>(k.p), p2p);
  if (sync > 0) c.dp_sync_s.assign(static_cast<std::size_t>(k.p), sync);
  return c;
}

std::vector<Json> events_of(const Json& doc, const char* category) {
  std::vector<Json> out;
  for (const auto& e : doc.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("cat") == category) out.push_back(e);
  return out;
}

std::string shape(const Case& k) {
  return std::string(to_string(k.schedule)) + " p=" + std::to_string(k.p) + " m=" + std::to_string(k.m) +
         " v=" + std::to_string(k.v);
}

void expect_us(double got_us, double want_s, const std::string& what) {
  EXPECT_NEAR(got_us, want_s * 1e6, 1e-6 * std::max(1.0, want_s * 1e6)) << what;
}

TEST(ChromeTrace, OneCompleteEventPerOperationOnItsStageTrack) {
  PipelineSimulator sim;
  for (const Case& k : kCases) {
    const Timeline t = sim.run(costs_for(k, 0.0, 0.0));
    const Json doc = Json::parse(timeline_to_chrome_trace(t).dump());  // through text, as a viewer reads it
    ASSERT_TRUE(doc.is_object());
    EXPECT_EQ(doc.at("displayTimeUnit"), "ms");
    const auto ops = events_of(doc, "compute");
    ASSERT_EQ(ops.size(), static_cast<std::size_t>(k.p * k.m * k.v) * k.ops_per_chunk_mb) << shape(k);
    ASSERT_EQ(ops.size(), t.ops.size());
    std::set<std::string> seen;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Json& e = ops[i];
      const TimelineOp& op = t.ops[i];
      const std::string name = e.at("name");
      const char want = op.kind == OpKind::forward ? 'F' : op.kind == OpKind::backward ? 'B' : 'W';
      EXPECT_EQ(name.front(), want) << name;
      EXPECT_EQ(name, std::string(1, want) + " mb" + std::to_string(op.microbatch) + " c" + std::to_string(op.chunk));
      EXPECT_TRUE(seen.insert(name + " s" + std::to_string(op.stage)).second) << "duplicate " << name;
      EXPECT_EQ(e.at("pid"), 1);
      EXPECT_EQ(e.at("tid"), op.stage + 1);
      EXPECT_EQ(e.at("args").at("stage"), op.stage);
      EXPECT_EQ(e.at("args").at("chunk"), op.chunk);
      EXPECT_EQ(e.at("args").at("microbatch"), op.microbatch);
      expect_us(e.at("ts").get<double>(), op.start_s, name);
      expect_us(e.at("dur").get<double>(), op.end_s - op.start_s, name);
    }
    EXPECT_TRUE(events_of(doc, "p2p").empty()) << "zero p2p draws no transfers";
    EXPECT_TRUE(events_of(doc, "dp-sync").empty()) << "no sync drawn without DP sync";
    for (const auto& e : doc.at("traceEvents")) {
      const std::string name = e.at("name");
      EXPECT_NE(name.rfind("p2p", 0), 0u) << name;
      EXPECT_NE(name.rfind("dp-sync", 0), 0u) << name;
    }
  }
}

TEST(ChromeTrace, TracksAreNamedAndNeverOverlap) {
  PipelineSimulator sim;
  for (const Case& k : kCases)
    for (double p2p : {0.0, 0.05, 3.0})  // 3.0: transfers longer than ops, so they overlap in time
      for (double sync : {0.0, 2.0}) {
        const Timeline t = sim.run(costs_for(k, p2p, sync));
        const Json doc = timeline_to_chrome_trace(t, {"my run", to_string(k.schedule)});
        std::map<std::int64_t, std::string> thread_names;
        bool process_named = false;
        for (const auto& e : doc.at("traceEvents")) {
          EXPECT_EQ(e.at("pid"), 1) << "pid 0 is Perfetto's idle process";
          if (e.at("ph") != "M") continue;
          if (e.at("name") == "process_name") process_named = e.at("args").at("name") == "my run";
          if (e.at("name") == "thread_name") thread_names[e.at("tid").get<std::int64_t>()] = e.at("args").at("name");
        }
        EXPECT_TRUE(process_named);
        EXPECT_EQ(doc.at("otherData").at("schedule"), to_string(k.schedule));
        for (int s = 0; s < k.p; ++s) EXPECT_EQ(thread_names[s + 1], "stage " + std::to_string(s));
        EXPECT_FALSE(thread_names.count(0)) << "tid 0 is Perfetto's idle task";
        // Every complete event sits on a named track; events of a track do not overlap.
        std::map<std::int64_t, std::vector<std::pair<double, double>>> tracks;
        for (const auto& e : doc.at("traceEvents")) {
          if (e.at("ph") != "X") continue;
          const auto tid = e.at("tid").get<std::int64_t>();
          ASSERT_TRUE(thread_names.count(tid)) << "unnamed track " << tid;
          const double ts = e.at("ts"), dur = e.at("dur");
          EXPECT_GE(dur, 0.0);
          tracks[tid].emplace_back(ts, ts + dur);
          const std::string name = e.at("name");
          if (e.at("cat") == "p2p") {
            EXPECT_EQ(name.rfind("p2p ", 0), 0u) << name;
            const int to = e.at("args").at("to_stage");
            EXPECT_EQ(thread_names[tid].rfind("p2p \xe2\x86\x92 stage " + std::to_string(to), 0), 0u) << thread_names[tid];
          } else if (e.at("cat") == "dp-sync") {
            const int stage = e.at("args").at("stage");
            EXPECT_EQ(name, "dp-sync stage " + std::to_string(stage));
            EXPECT_EQ(thread_names[tid], "dp-sync stage " + std::to_string(stage));
          }
        }
        for (auto& [tid, spans] : tracks) {
          std::sort(spans.begin(), spans.end());
          for (std::size_t i = 1; i < spans.size(); ++i)
            EXPECT_LE(spans[i - 1].second, spans[i].first + 1e-6) << "overlap on track " << tid << " (" << thread_names[tid] << ")";
        }
      }
}

TEST(ChromeTrace, TransfersAndSyncsAreDrawnWhenPositive) {
  PipelineSimulator sim;
  for (const Case& k : kCases) {
    const Timeline t = sim.run(costs_for(k, 0.25, 1.5));
    const Json doc = timeline_to_chrome_trace(t);
    const auto p2p = events_of(doc, "p2p");
    const auto syncs = events_of(doc, "dp-sync");
    // Every boundary crossing of every micro-batch: 2 (V - 1) per micro-batch with V virtual stages.
    EXPECT_EQ(p2p.size(), static_cast<std::size_t>(2 * (k.p * k.v - 1) * k.m)) << shape(k);
    ASSERT_EQ(p2p.size(), t.p2p.size());
    for (std::size_t i = 0; i < p2p.size(); ++i) {
      const P2pEvent& e = t.p2p[i];
      const std::string kind = e.kind == OpKind::forward ? "F" : "B";
      EXPECT_EQ(p2p[i].at("name"), "p2p " + kind + " mb" + std::to_string(e.microbatch) + " s" +
                                       std::to_string(e.from_stage) + "\xe2\x86\x92s" + std::to_string(e.to_stage));
      EXPECT_EQ(p2p[i].at("args").at("from_stage"), e.from_stage);
      EXPECT_EQ(p2p[i].at("args").at("to_stage"), e.to_stage);
      EXPECT_EQ(p2p[i].at("args").at("microbatch"), e.microbatch);
      expect_us(p2p[i].at("ts").get<double>(), e.start_s, "p2p ts");
      expect_us(p2p[i].at("dur").get<double>(), e.end_s - e.start_s, "p2p dur");
    }
    ASSERT_EQ(syncs.size(), static_cast<std::size_t>(k.p)) << shape(k);
    ASSERT_EQ(syncs.size(), t.syncs.size());
    for (std::size_t i = 0; i < syncs.size(); ++i) {
      EXPECT_EQ(syncs[i].at("args").at("stage"), t.syncs[i].stage);
      expect_us(syncs[i].at("ts").get<double>(), t.syncs[i].start_s, "sync ts");
      expect_us(syncs[i].at("dur").get<double>(), t.syncs[i].end_s - t.syncs[i].start_s, "sync dur");
    }
    // Still exactly one event per operation.
    EXPECT_EQ(events_of(doc, "compute").size(), static_cast<std::size_t>(k.p * k.m * k.v) * k.ops_per_chunk_mb);
  }
}

TEST(ChromeTrace, CriticalPathIsMarked) {
  PipelineSimulator sim;
  const Timeline t = sim.run(costs_for(kCases[1], 0.1, 0.0));
  const auto ops = events_of(timeline_to_chrome_trace(t), "compute");
  std::size_t marked = 0;
  for (const auto& e : ops) marked += e.at("args").at("critical").get<bool>() ? 1 : 0;
  EXPECT_EQ(marked, t.critical_path.size());
  for (std::size_t i : t.critical_path) EXPECT_TRUE(ops[i].at("args").at("critical").get<bool>());
}

class ChromeTraceFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessera_chrome_trace_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(ChromeTraceFile, WrittenFileIsTheSameDocument) {
  PipelineSimulator sim;
  for (const Case& k : kCases) {
    const Timeline t = sim.run(costs_for(k, 0.1, 1.0));
    const fs::path path = dir_ / "trace.json";
    write_chrome_trace(t, path.string(), {"tessera pipeline", to_string(k.schedule)});
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const Json parsed = Json::parse(text.str());
    EXPECT_EQ(parsed, timeline_to_chrome_trace(t, {"tessera pipeline", to_string(k.schedule)})) << shape(k);
  }
}

TEST_F(ChromeTraceFile, UnwritablePathIsATraceError) {
  PipelineSimulator sim;
  const Timeline t = sim.run(costs_for(kCases[0], 0.0, 0.0));
  for (const fs::path& path : {dir_ / "no" / "such" / "dir" / "t.json", dir_}) {
    try {
      write_chrome_trace(t, path.string());
      ADD_FAILURE() << "no error writing " << path;
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), "trace") << e.what();
    }
  }
}

}  // namespace
}  // namespace tessera
