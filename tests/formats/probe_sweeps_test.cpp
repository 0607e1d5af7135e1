// The probe's measurement tables (README "tessera probe"): each reads to its values, and every
// bad row is refused naming its file, line and column: a row that breaks its own arithmetic, a
// zero time, a value outside its kind, a world that disagrees with itself.
#include <gtest/gtest.h>

#include <string>

#include "common/thrown_field.h"
#include "formats/attention_sweep.h"
#include "formats/collective_sweep.h"
#include "formats/gemm_sweep.h"
#include "formats/kernel_sweep.h"
#include "formats/probe_environment.h"

namespace tessera {
namespace {

using testing::thrown_field;

TEST(GemmSweep, TimeAndGroupsKeepTheRowsArithmetic) {
  // 2 x 4 x 1024 x 2048 x 512 / 0.0256 ms = 335.5 TFLOP/s.
  const auto rows = parse_gemm_sweep("groups,m,n,k,dtype,tflops,time_ms\n4,1024,2048,512,bf16,335.5,0.0256\n", "g.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].groups, 4);
  const auto field = [](const std::string& row) {
    return thrown_field([&] { parse_gemm_sweep("groups,m,n,k,dtype,tflops,time_ms\n" + row + "\n", "g.csv"); });
  };
  EXPECT_EQ(field("4,1024,2048,512,bf16,335.5,0"), "gemm:g.csv:2.7");      // a GEMM with zero time
  EXPECT_EQ(field("4,1024,2048,512,bf16,335.5,0.0512"), "gemm:g.csv:2.6");  // twice the time, same rate
  EXPECT_EQ(field("1,1024,2048,512,bf16,335.5,0.0256"), "gemm:g.csv:2.6");  // the groups left out of the rate
  EXPECT_EQ(field("0,1024,2048,512,bf16,335.5,0.0256"), "gemm:g.csv:2.1");
  // Rounding of the printed digits is allowed: 0.0146 ms has three digits (h200/gemm.csv line 3).
  EXPECT_NO_THROW(parse_gemm_sweep("m,n,k,dtype,tflops,time_ms\n1024,1024,1024,bf16,147.4,0.0146\n", "g.csv"));
}

TEST(AttentionSweep, ReadsTheH200FileAndItsRules) {
  const auto rows = parse_attention_sweep(
      "batch,heads,kv_heads,seq,head_dim,fwd_ms,fwd_tflops,fwd_bwd_ms,fwd_bwd_tflops_at_3.5x\n"
      "8,32,8,2048,128,0.533,515.7,2.381,404.1\n",
      "a.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].causal);  // no causal column: causal
  EXPECT_DOUBLE_EQ(rows[0].fwd_s, 0.533e-3);
  const std::string header = "batch,heads,kv_heads,seq,head_dim,causal,fwd_ms,fwd_bwd_ms\n";
  EXPECT_FALSE(parse_attention_sweep(header + "1,16,16,1024,64,0,0.1,0.4\n", "a")[0].causal);
  const auto field = [&](const std::string& row) { return thrown_field([&] { parse_attention_sweep(header + row + "\n", "a"); }); };
  EXPECT_EQ(field("1,32,12,1024,128,1,0.1,0.4"), "attention:a:2.3");  // 12 kv heads do not divide 32
  EXPECT_EQ(field("1,32,8,1024,128,yes,0.1,0.4"), "attention:a:2.6");
  EXPECT_EQ(field("1,32,8,1024,128,1,0,0.4"), "attention:a:2.7");
  EXPECT_EQ(field("1,32,8,1024,128,1,0.4,0.3"), "attention:a:2.8");  // backward cannot be free
  EXPECT_EQ(field("1,32,8,1024,128,1,0.4"), "attention:a:2.8");      // truncated
}

TEST(KernelSweep, DispatchMovesNothingAndEveryKernelMovesSomething) {
  const std::string header = "op,impl,tokens,width,pass,bytes,kernels,time_ms\n";
  const auto rows = parse_kernel_sweep(header + "copy,eager,4096,4096,fwd,67108864,1,0.0168\ndispatch,eager,1,1,fwd,0,1,0.006\n", "k");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].host_dispatch());
  EXPECT_TRUE(rows[1].host_dispatch());
  const auto field = [&](const std::string& row) { return thrown_field([&] { parse_kernel_sweep(header + row + "\n", "k"); }); };
  EXPECT_EQ(field("dispatch,eager,1,1,fwd,8,1,0.006"), "kernels:k:2.6");
  EXPECT_EQ(field("copy,eager,4096,4096,fwd,0,1,0.0168"), "kernels:k:2.6");
  EXPECT_EQ(field("copy,eager,4096,4096,fwd,67108864,1,0"), "kernels:k:2.8");
  EXPECT_EQ(field("softmax,eager,4096,4096,fwd,67108864,1,0.01"), "kernels:k:2.1");
  EXPECT_EQ(field("copy,compiled,4096,4096,fwd,67108864,1,0.01"), "kernels:k:2.2");
  EXPECT_EQ(field("copy,eager,4096,4096,bwd,67108864,1,0.01"), "kernels:k:2.5");
  EXPECT_EQ(field("copy,eager,4096,4096,fwd,67108864,1.5,0.01"), "kernels:k:2.7");
}

TEST(CollectiveSweep, EveryRowKeepsNcclTestsArithmetic) {
  const std::string header = "kind,bytes,ranks,nodes,gpus_per_node,time_us,algbw_gbps,busbw_gbps\n";
  // 1 MiB all-reduce over 8 ranks in 20 us: algbw 52.43 GB/s, busbw x 2 x 7 / 8 = 91.75.
  const auto rows = parse_collective_sweep(header + "all_reduce,1048576,8,1,8,20,52.4288,91.7504\n", "c");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].kind, NcclCollective::all_reduce);
  EXPECT_DOUBLE_EQ(rows[0].time_s, 20e-6);
  const auto field = [&](const std::string& row) { return thrown_field([&] { parse_collective_sweep(header + row + "\n", "c"); }); };
  EXPECT_EQ(field("all_reduce,1048576,8,1,8,40,52.4288,91.7504"), "collectives:c:2.7");  // time doubled
  EXPECT_EQ(field("all_reduce,1048576,8,1,8,20,52.4288,52.4288"), "collectives:c:2.8");  // busbw without its factor
  EXPECT_EQ(field("all_gather,1048576,8,1,8,20,52.4288,91.7504"), "collectives:c:2.8");  // all-reduce's factor
  EXPECT_EQ(field("all_reduce,1048576,8,2,8,20,52.4288,91.7504"), "collectives:c:2.3");  // 2 x 8 is not 8
  EXPECT_EQ(field("all_reduce,1048576,1,1,1,20,52.4288,91.7504"), "collectives:c:2.3");
  EXPECT_EQ(field("all_reduce,1048576,8,1,8,0,52.4288,91.7504"), "collectives:c:2.6");
  EXPECT_EQ(field("broadcast,1048576,8,1,8,20,52.4288,91.7504"), "collectives:c:2.1");
  // send/recv's bus bandwidth is its algorithm bandwidth.
  EXPECT_NO_THROW(parse_collective_sweep(header + "send_recv,1048576,2,1,2,20,52.4288,52.4288\n", "c"));
}

std::string environment(const std::string& world, const std::string& files = "[\"gemm.csv\"]") {
  return R"({"probe_format": 1, "device": "cuda", "backend": "nccl", "device_name": "NVIDIA H200", )" + world +
         R"(, "torch": "2.11.0", "cuda": null, "files": )" + files + "}";
}

TEST(ProbeEnvironment, TheWorldMustAgreeWithItself) {
  const ProbeEnvironment env = parse_probe_environment(environment(R"("world_size": 2, "nodes": 1, "gpus_per_node": 2)"), "e");
  EXPECT_EQ(env.world_size, 2);
  EXPECT_EQ(env.files, std::vector<std::string>{"gemm.csv"});
  EXPECT_EQ(env.torch_version, "2.11.0");
  const std::string two = R"("world_size": 2, "nodes": 1, "gpus_per_node": 2)";
  EXPECT_EQ(thrown_field([] { parse_probe_environment(environment(R"("world_size": 4, "nodes": 1, "gpus_per_node": 2)"), "e"); }),
            "probe:e.world_size");
  EXPECT_EQ(thrown_field([&] { parse_probe_environment(environment(two, "[\"gemm.txt\"]"), "e"); }), "probe:e.files");
  EXPECT_EQ(thrown_field([&] { parse_probe_environment(environment(two, "[\"gemm.csv\", \"gemm.csv\"]"), "e"); }), "probe:e.files");
  std::string other = environment(two);
  other.replace(other.find("\"probe_format\": 1"), 17, "\"probe_format\": 2");
  EXPECT_EQ(thrown_field([&] { parse_probe_environment(other, "e"); }), "probe:e.probe_format");

  const std::string header = "rank,world_size,local_rank,node,hostname,device_name\n";
  EXPECT_NO_THROW(check_probe_ranks(header + "0,2,0,0,h,NVIDIA H200\n1,2,1,0,h,NVIDIA H200\n", "r", env));
  const auto field = [&](const std::string& rows) { return thrown_field([&] { check_probe_ranks(header + rows, "r", env); }); };
  EXPECT_EQ(field("0,2,0,0,h,x\n1,3,1,0,h,x\n"), "ranks:r:3.2");  // a rank of another world size
  EXPECT_EQ(field("0,2,0,0,h,x\n0,2,1,0,h,x\n"), "ranks:r:3.1");  // rank 0 twice
  EXPECT_EQ(field("0,2,0,0,h,x\n2,2,1,0,h,x\n"), "ranks:r:3.1");  // no rank 2 in a world of 2
  EXPECT_EQ(field("0,2,0,0,h,x\n"), "ranks:r:1.1");               // rank 1 missing
}

}  // namespace
}  // namespace tessera
