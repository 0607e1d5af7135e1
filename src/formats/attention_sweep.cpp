#include "formats/attention_sweep.h"

#include "formats/sweep_table.h"

namespace tessera {

namespace {
// A sweep of heads x sequence lengths x batch sizes is tens of shapes; 10,000 bounds the fit.
constexpr std::size_t kMaxAttentionRows = 10'000;

AttentionSweepRow attention_row(const SweepRow& r) {
  AttentionSweepRow row;
  row.line = r.line();
  row.batch = r.whole("batch");
  row.heads = r.whole("heads");
  row.kv_heads = r.whole("kv_heads");
  row.seq = r.whole("seq");
  row.head_dim = r.whole("head_dim");
  if (row.kv_heads > row.heads || static_cast<long long>(row.heads) % static_cast<long long>(row.kv_heads) != 0)
    r.fail("kv_heads", "kv_heads " + std::string(r.text("kv_heads")) + " does not divide heads " +
                           std::string(r.text("heads")),
           "a divisor of heads (grouped-query attention)");
  if (r.cell("causal")) row.causal = r.choice("causal", {"1", "0"}) == "1";
  row.fwd_s = r.positive("fwd_ms") * 1e-3;
  row.fwd_bwd_s = r.positive("fwd_bwd_ms") * 1e-3;
  if (row.fwd_bwd_s <= row.fwd_s)
    r.fail("fwd_bwd_ms", "fwd_bwd_ms " + std::string(r.text("fwd_bwd_ms")) + " is not longer than fwd_ms " +
                             std::string(r.text("fwd_ms")),
           "forward + backward longer than the forward alone");
  return row;
}
}  // namespace

std::vector<AttentionSweepRow> parse_attention_sweep(std::string_view csv_text, const std::string& file) {
  const SweepTable table(csv_text, "attention", file, {"batch", "heads", "kv_heads", "seq", "head_dim", "fwd_ms", "fwd_bwd_ms"},
                         {"causal"}, kMaxAttentionRows);
  std::vector<AttentionSweepRow> rows;
  for (std::size_t i = 0; i < table.size(); ++i) rows.push_back(attention_row(table.row(i)));
  return rows;
}

}  // namespace tessera
