// Fused-attention timings (the probe's attention.csv, `tessera calibrate --attention`; README
// "tessera probe"), in the sweep rules of formats/sweep_table.h:
//
//   batch,heads,kv_heads,seq,head_dim[,causal],fwd_ms,fwd_bwd_ms
//
// Self-attention of `seq` queries over `seq` keys, `heads` query heads of `head_dim`; fwd_ms the
// forward call, fwd_bwd_ms forward then backward. `causal` is 1 or 0; a file without the column
// is causal (what training runs, and ../shared/validation/h200/attention.csv, which has none).
// Errors: Error("attention:<file>:<line>.<column>", what, allowed).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct AttentionSweepRow {
  std::size_t line = 0;
  double batch = 0, heads = 0, kv_heads = 0, seq = 0, head_dim = 0;
  bool causal = true;
  double fwd_s = 0, fwd_bwd_s = 0;
};

std::vector<AttentionSweepRow> parse_attention_sweep(std::string_view csv_text, const std::string& file);

}  // namespace tessera
