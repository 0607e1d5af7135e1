// End-to-end checks of `tessera simulate` (the real binary, under `timeout 60`): --json matches the
// closed forms for uniform costs, --trace writes a Chrome trace that parses, --costs files with
// per-stage and per-stage-per-micro-batch arrays, and bad input exits 2 with one stderr line naming
// the field.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_process.h"
#include "report/chrome_trace.h"

namespace {

using namespace tessera::testing;

namespace fs = std::filesystem;
using Json = nlohmann::json;

class SimulateCli : public CliScratchTest {
 protected:
  SimulateCli() { command_ = {"simulate"}; }
};

// Exit 2, nothing on stdout, exactly one stderr line naming `field` before "(allowed:", no crash.
void expect_bad_simulate_input(const RunResult& r, const std::string& field) {
  EXPECT_EQ(r.signal, 0) << describe(r);
  EXPECT_FALSE(r.timed_out) << describe(r);
  for (const char* marker : {"terminate called", "AddressSanitizer", "LeakSanitizer", "runtime error:"})
    EXPECT_EQ(r.err.find(marker), std::string::npos) << describe(r);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_TRUE(r.out.empty()) << describe(r);
  ASSERT_FALSE(r.err.empty()) << describe(r);
  EXPECT_EQ(r.err.back(), '\n') << describe(r);
  const std::string line = r.err.substr(0, r.err.find('\n'));
  EXPECT_EQ(line.size() + 1, r.err.size()) << "stderr should be one line\n" << describe(r);
  EXPECT_TRUE(contains_word(line.substr(0, line.find("(allowed:")), field))
      << "stderr should name " << field << "\n" << describe(r);
}

void expect_rel(double got, double want, const std::string& what = "") {
  EXPECT_NEAR(got, want, 1e-9 * std::max(1.0, std::fabs(want))) << what;
}

// ---- results ----------------------------------------------------------------------------------

TEST_F(SimulateCli, JsonSummaryMatchesTheOneF1BClosedForm) {
  const Json j = run_json({"--schedule", "1f1b", "--stages", "4", "--microbatches", "8", "--fwd", "1", "--bwd", "2"});
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("schedule"), "1f1b");
  EXPECT_EQ(j.at("num_stages"), 4);
  EXPECT_EQ(j.at("microbatches"), 8);
  EXPECT_EQ(j.at("vpp"), 1);
  expect_rel(j.at("makespan"), (8 + 4 - 1) * 3.0);
  expect_rel(j.at("pipeline_makespan"), 33.0);
  expect_rel(j.at("bubble_fraction"), 3.0 / 11.0);
  EXPECT_GT(j.at("critical_path_ops").get<int>(), 0);
  EXPECT_FALSE(j.contains("ops")) << "the op list only with --ops";
  ASSERT_EQ(j.at("stages").size(), 4u);
  for (int s = 0; s < 4; ++s) {
    const Json& st = j.at("stages")[static_cast<std::size_t>(s)];
    EXPECT_EQ(st.at("stage"), s);
    expect_rel(st.at("busy"), 24.0);
    expect_rel(st.at("idle"), 9.0);
    expect_rel(st.at("bubble_fraction"), 9.0 / 33.0);
    expect_rel(st.at("peak_inflight"), 4.0 - s);
  }
}

TEST_F(SimulateCli, OtherSchedulesMatchTheirClosedForms) {
  // GPipe and 1F1B with --wgrad: backward = bwd + wgrad.
  expect_rel(run_json({"--schedule", "gpipe", "--stages", "3", "--microbatches", "5", "--fwd", "1", "--bwd", "1.5",
                       "--wgrad", "0.5"})
                 .at("makespan"),
             (5 + 3 - 1) * 3.0);
  // Interleaved: m (f + b) + (p - 1)(f + b) / v.
  expect_rel(run_json({"--schedule", "interleaved", "--stages", "4", "--microbatches", "8", "--vpp", "2", "--fwd", "1",
                       "--bwd", "2"})
                 .at("makespan"),
             8 * 3.0 + 3 * 3.0 / 2);
  // ZB-H1: m (F + B + W) + (p - 1)(F + B - W).
  expect_rel(run_json({"--schedule", "zb-h1", "--stages", "4", "--microbatches", "8", "--fwd", "1", "--bwd", "1",
                       "--wgrad", "1"})
                 .at("makespan"),
             8 * 3.0 + 3 * 1.0);
}

TEST_F(SimulateCli, OpsListedOnlyWithOps) {
  const Json j = run_json({"--schedule", "zb-h1", "--stages", "2", "--microbatches", "3", "--fwd", "1", "--bwd", "1",
                           "--wgrad", "1", "--ops"});
  ASSERT_TRUE(j.contains("ops"));
  ASSERT_EQ(j.at("ops").size(), 2u * 3u * 3u);
  for (const auto& op : j.at("ops")) {
    const std::string kind = op.at("kind");
    EXPECT_TRUE(kind == "F" || kind == "B" || kind == "W") << kind;
    EXPECT_LE(op.at("start").get<double>(), op.at("end").get<double>());
  }
}

TEST_F(SimulateCli, TraceFileIsWrittenAndParses) {
  const fs::path trace = dir_ / "out.json";
  const Json j = run_json({"--schedule", "interleaved", "--stages", "2", "--microbatches", "4", "--vpp", "2", "--fwd",
                           "1", "--bwd", "2", "--p2p", "0.1", "--trace", trace.string()});
  expect_rel(j.at("makespan"), j.at("pipeline_makespan"));
  ASSERT_TRUE(fs::exists(trace));
  const Json doc = Json::parse(read_file(trace));
  std::size_t ops = 0, p2p = 0;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const std::string name = e.at("name");
    if (e.at("cat") == "compute") {
      ++ops;
      EXPECT_TRUE(name[0] == 'F' || name[0] == 'B') << name;
    } else if (e.at("cat") == "p2p") {
      ++p2p;
      EXPECT_EQ(name.rfind("p2p ", 0), 0u) << name;
    }
  }
  EXPECT_EQ(ops, 2u * 4u * 2u * 2u);
  EXPECT_EQ(p2p, 2u * (2u * 2u - 1u) * 4u);  // every boundary crossing of every micro-batch
  // The table mentions the trace.
  const RunResult r = run({"--schedule", "1f1b", "--stages", "2", "--microbatches", "2", "--fwd", "1", "--bwd", "1",
                           "--trace", (dir_ / "t2.json").string()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("t2.json"), std::string::npos) << r.out;
  EXPECT_TRUE(Json::parse(read_file(dir_ / "t2.json")).contains("traceEvents"));
}

// Issue 13: a trace holds at most kMaxTraceEvents events; a bigger timeline keeps its earliest
// part (every event starting before events_before_s), says so in otherData and in one stderr line.
TEST_F(SimulateCli, BigTracesAreCutToTheirEarliestEvents) {
  const fs::path trace = dir_ / "big.json";
  const RunResult r = run({"--schedule", "1f1b", "--stages", "2", "--microbatches", "35000", "--fwd", "1", "--bwd",
                           "2", "--p2p", "0.1", "--trace", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  EXPECT_LT(fs::file_size(trace), 64u << 20);
  const Json doc = Json::parse(read_file(trace));
  const Json& cut = doc.at("otherData").at("truncated");
  const std::size_t events = doc.at("traceEvents").size();
  EXPECT_EQ(cut.at("events_written").get<std::size_t>(), events);
  EXPECT_LE(events, tessera::kMaxTraceEvents);
  EXPECT_GE(events, tessera::kMaxTraceEvents - 8);  // the prefix stops only at the cap
  // Process name, two stage tracks and one p2p lane into each (two metadata events each), then
  // 2 x 2 x 35,000 operations and 2 x 35,000 transfers.
  EXPECT_EQ(cut.at("events_total").get<std::size_t>(), 1 + 2 * 2 + 2 * 2 + 4 * 35000u + 2 * 35000u);
  const double before_us = cut.at("events_before_s").get<double>() * 1e6;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") == "X") {
      EXPECT_LE(e.at("ts").get<double>(), before_us);
    }
  }
  // Small traces stay whole, without the key.
  run_json({"--schedule", "1f1b", "--stages", "2", "--microbatches", "3", "--fwd", "1", "--bwd", "2", "--trace",
            (dir_ / "small.json").string()});
  EXPECT_FALSE(Json::parse(read_file(dir_ / "small.json")).at("otherData").contains("truncated"));
  // --ops lists at most a million operations.
  expect_bad_simulate_input(run({"--schedule", "1f1b", "--stages", "100", "--microbatches", "5001", "--fwd", "1", "--bwd", "2",
                        "--json", "--ops"}),
                   "ops");
}

TEST_F(SimulateCli, CostsFileShapes) {
  // The same uniform costs as a number, per stage and per stage per micro-batch: the closed form.
  for (const char* costs : {R"({"schedule": "1f1b", "stages": 2, "microbatches": 3, "fwd": 1, "bwd": 2})",
                            R"({"schedule": "1f1b", "stages": 2, "microbatches": 3, "fwd": [1, 1], "bwd": [2, 2]})",
                            R"({"schedule": "1f1b", "stages": 2, "microbatches": 3, "fwd": [[1, 1, 1], [1, 1, 1]],
                                "bwd": [[2, 2, 2], 2], "p2p": [0], "dp_sync": 0, "dp_sync_overlap": true})"}) {
    const Json j = run_json({"--costs", file("c.json", costs).string()});
    expect_rel(j.at("makespan"), (3 + 2 - 1) * 3.0, costs);
  }
  // Uneven stages (worked by hand): stage 1 twice as slow.
  //   s0: F0 [0,1] F1 [1,2]           B0 [7,9]            B1 [13,15]
  //   s1:     F0 [1,3] B0 [3,7] F1 [7,9] B1 [9,13]
  expect_rel(run_json({"--costs", file("u.json", R"({"schedule": "1f1b", "stages": 2, "microbatches": 2,
                                                     "fwd": [1, 2], "bwd": [2, 4]})")
                                      .string()})
                 .at("makespan"),
             15.0);
  // Uneven micro-batches: micro-batch 1's forward on stage 1 takes 3 -> F1 [7,10] B1 [10,14] B1 [14,16].
  expect_rel(run_json({"--costs", file("m.json", R"({"schedule": "1f1b", "stages": 2, "microbatches": 2,
                                                     "fwd": [[1, 1], [2, 3]], "bwd": [[2, 2], [4, 4]]})")
                                      .string()})
                 .at("makespan"),
             16.0);
  // p2p per boundary and serial DP sync: 1 micro-batch F0 F1 B1 B0 with two crossings of 0.5,
  // then stage 0's sync of 2 after its last op.
  const Json s = run_json({"--costs", file("s.json", R"({"schedule": "gpipe", "stages": 2, "microbatches": 1,
      "fwd": 1, "bwd": 1, "p2p": [0.5, 0], "dp_sync": [2, 0.5], "dp_sync_overlap": false})")
                                          .string()});
  expect_rel(s.at("pipeline_makespan"), 4 * 1.0 + 2 * 0.5);
  expect_rel(s.at("makespan"), 5.0 + 2.0);
  // vpp: each chunk takes T / v; interleaved closed form.
  expect_rel(run_json({"--costs", file("v.json", R"({"schedule": "interleaved", "stages": 2, "microbatches": 2,
                                                     "vpp": 2, "fwd": [2, 2], "bwd": 4})")
                                      .string()})
                 .at("makespan"),
             2 * 6.0 + 6.0 / 2);
}

TEST_F(SimulateCli, CommandLineOverridesTheCostsFile) {
  const auto costs = file("c.json", R"({"schedule": "gpipe", "stages": 4, "microbatches": 8, "fwd": 1, "bwd": 2})");
  const Json j = run_json({"--costs", costs.string(), "--schedule", "1f1b", "--microbatches", "4", "--bwd", "1"});
  EXPECT_EQ(j.at("schedule"), "1f1b");
  EXPECT_EQ(j.at("microbatches"), 4);
  expect_rel(j.at("makespan"), (4 + 4 - 1) * 2.0);
}

// ---- bad input ----------------------------------------------------------------------------------

const std::vector<std::string> kBase = {"--stages", "4", "--microbatches", "8", "--fwd", "1", "--bwd", "2"};

std::vector<std::string> simulate_args(std::vector<std::string> head, const std::vector<std::string>& tail = kBase) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

TEST_F(SimulateCli, BadCommandLines) {
  expect_bad_simulate_input(run(simulate_args({"--schedule", "pipedream"})), "schedule");
  expect_bad_simulate_input(run(kBase), "schedule");  // no schedule anywhere
  expect_bad_simulate_input(run({"--schedule", "1f1b", "--stages", "0", "--microbatches", "8", "--fwd", "1", "--bwd", "2"}),
                   "stages");
  expect_bad_simulate_input(run({"--schedule", "1f1b", "--stages", "4", "--microbatches", "0", "--fwd", "1", "--bwd", "2"}),
                   "microbatches");
  expect_bad_simulate_input(run({"--schedule", "1f1b", "--stages", "4", "--microbatches", "8", "--fwd=-1", "--bwd", "2"}),
                   "fwd");
  expect_bad_simulate_input(run({"--schedule", "1f1b", "--stages", "4", "--microbatches", "8", "--fwd", "-1", "--bwd", "2"}),
                   "fwd");
  expect_bad_simulate_input(run({"--schedule", "1f1b", "--stages", "4", "--microbatches", "8", "--fwd", "nan", "--bwd", "2"}),
                   "fwd");
  expect_bad_simulate_input(run({"--schedule", "1f1b", "--stages", "4", "--microbatches", "8", "--fwd", "abc", "--bwd", "2"}),
                   "fwd");
  expect_bad_simulate_input(run({"--schedule", "1f1b", "--stages", "4", "--microbatches", "8", "--fwd", "1e300", "--bwd", "2"}),
                   "fwd");
  expect_bad_simulate_input(run({"--schedule", "1f1b", "--stages", "4", "--microbatches", "8", "--fwd", "1"}), "bwd");
  // A denormal or sub-picosecond duration is a typo, not a time (issue 13, D8).
  expect_bad_simulate_input(run({"--schedule", "1f1b", "--stages", "4", "--microbatches", "8", "--fwd", "1e-308", "--bwd", "2"}),
                   "fwd");
  expect_bad_simulate_input(run(simulate_args({"--schedule", "1f1b", "--p2p", "1e-13"})), "p2p");
  expect_bad_simulate_input(run(simulate_args({"--schedule", "1f1b", "--p2p", "-0.5"})), "p2p");
  expect_bad_simulate_input(run(simulate_args({"--schedule", "1f1b", "--wgrad", "inf"})), "wgrad");
  expect_bad_simulate_input(run({"--schedule", "interleaved", "--stages", "4", "--microbatches", "6", "--vpp", "2", "--fwd", "1",
                        "--bwd", "2"}),
                   "microbatches");
  expect_bad_simulate_input(run(simulate_args({"--schedule", "1f1b", "--vpp", "2"})), "vpp");
  expect_bad_simulate_input(run(simulate_args({"--schedule", "interleaved", "--vpp", "0"})), "vpp");
  expect_bad_simulate_input(run({"--schedule", "1f1b", "--stages", "100000", "--microbatches", "10000", "--fwd", "1", "--bwd",
                        "2"}),
                   "microbatches");
  expect_bad_simulate_input(run(simulate_args({"--schedule", "1f1b", "--trace", (dir_ / "no" / "such" / "t.json").string()})), "trace");
  expect_bad_simulate_input(run(simulate_args({"--schedule", "1f1b", "--ops"})), "ops");
}

TEST_F(SimulateCli, BadCostsFiles) {
  auto costs_run = [&](const std::string& text) { return run({"--costs", file("c.json", text).string()}); };
  expect_bad_simulate_input(run({"--costs", (dir_ / "missing.json").string()}), "costs");
  expect_bad_simulate_input(costs_run(R"({"schedule": "1f1b", "stages": 2,)"), "costs");  // malformed
  expect_bad_simulate_input(costs_run("[1, 2]"), "costs");                             // not an object
  expect_bad_simulate_input(costs_run(R"({"schedule": "1f1b", "stages": 2, "microbatches": 2, "fwd": [1, 1e-320], "bwd": 1})"),
                   "fwd");  // a denormal stage time
  expect_bad_simulate_input(costs_run(R"({"schedule": "1f1b", "stages": 2, "microbatches": 2, "fwd": 1, "bwd": 1, "fwdd": 1})"),
                   "costs");  // unknown key
  expect_bad_simulate_input(costs_run(R"({"schedule": "1f1b", "stages": 3, "microbatches": 2, "fwd": [1, 2], "bwd": 1})"),
                   "fwd");  // wrong length
  expect_bad_simulate_input(costs_run(R"({"schedule": "1f1b", "stages": 2, "microbatches": 3, "fwd": 1,
                                 "bwd": [[1, 1, 1], [1, 1]]})"),
                   "bwd");  // wrong inner length
  expect_bad_simulate_input(costs_run(R"({"schedule": "1f1b", "stages": 2, "microbatches": 2, "fwd": [1, -2], "bwd": 1})"),
                   "fwd");
  expect_bad_simulate_input(costs_run(R"({"schedule": "1f1b", "stages": 2, "microbatches": 2, "fwd": [1, "2"], "bwd": 1})"),
                   "fwd");
  expect_bad_simulate_input(costs_run(R"({"schedule": "1f1b", "stages": 2, "microbatches": 2, "fwd": 1e300, "bwd": 1})"),
                   "fwd");
  expect_bad_simulate_input(costs_run(R"({"schedule": "zb-h1", "stages": 2, "microbatches": 2, "fwd": 1, "bwd": 1,
                                 "wgrad": {"a": 1}})"),
                   "wgrad");
  expect_bad_simulate_input(costs_run(R"({"schedule": "1f1b", "stages": 2.5, "microbatches": 2, "fwd": 1, "bwd": 1})"),
                   "stages");
  expect_bad_simulate_input(costs_run(R"({"schedule": 3, "stages": 2, "microbatches": 2, "fwd": 1, "bwd": 1})"), "schedule");
  expect_bad_simulate_input(costs_run(R"({"schedule": "interleaved", "stages": 2, "microbatches": 2, "vpp": 2, "fwd": 1,
                                 "bwd": 1, "p2p": [0.1]})"),
                   "p2p");  // interleaving needs the wrap-around link too
  expect_bad_simulate_input(costs_run(R"({"schedule": "1f1b", "stages": 2, "microbatches": 2, "fwd": 1, "bwd": 1,
                                 "dp_sync": [1, 2, 3]})"),
                   "dp_sync");
  expect_bad_simulate_input(costs_run(R"({"schedule": "1f1b", "stages": 2, "microbatches": 2, "fwd": 1, "bwd": 1,
                                 "dp_sync_overlap": "yes"})"),
                   "dp_sync_overlap");
  expect_bad_simulate_input(costs_run(R"({"schedule": "1f1b", "microbatches": 2, "fwd": 1, "bwd": 1})"), "stages");
}

}  // namespace
