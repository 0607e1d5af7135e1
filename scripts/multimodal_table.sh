#!/usr/bin/env bash
# Disaggregated vs monolithic for every built-in multimodal model x data mix (issue 5's report).
# 72B models on 1,296 H800s with 1,920 sequences per step; the rest on 128 H100s with 256.
# Usage: scripts/multimodal_table.sh [path/to/tessera]
set -euo pipefail
tessera=${1:-build/bin/tessera}
models=$("$tessera" models --json | /usr/bin/python3 -c 'import json, sys; print(" ".join(m["name"] for m in json.load(sys.stdin)["multimodal"]))')
mixes="caption-like interleaved-like video-like text-only audio-like"
# Columns: the disaggregated step; the monolithic step on every GPU, the speedup over it, MFU, the
# backbone alone's MFU on every GPU and the ratio; then the same two against the references on the
# whole-node count where the backbone alone runs fastest (fewer GPUs), when there is one.
printf '%-16s %-17s %9s %9s %7s %6s %6s %6s %6s %7s %6s %8s\n' model mix disagg_s mono_s speedup mfu bb_mfu mfu/bb subset sub_spd sub_mfu search_s
for model in $models; do
  case $model in
    *72b*) cluster=h800:1296; gbs=1920 ;;
    *) cluster=h100-sxm-80gb:128; gbs=256 ;;
  esac
  for mix in $mixes; do
    if ! out=$("$tessera" plan --model "$model" --data "$mix" --cluster "$cluster" --gbs "$gbs" --top 1 --json 2>&1); then
      printf '%-16s %-17s  n/a: %s\n' "$model" "$mix" "${out#error: }"
      continue
    fi
    /usr/bin/python3 -c '
import json, sys
j = json.loads(sys.argv[3])
p = j["plans"][0] if j["plans"] else None
m = j["baseline_monolithic"]
def f(x, d=3):
    return "-" if x is None else "%.*f" % (d, x)
disagg = p["iteration_time_s"] if p else None
mono = m["iteration_time_s"] if m else None
mfu = p["mfu"] if p else None
ratio = mfu / j["backbone_only_mfu"] if p and j["backbone_only_mfu"] else None
sub = j.get("on_fewer_gpus") or {}
sub_ratio = mfu / sub["backbone_only_mfu"] if p and sub.get("backbone_only_mfu") else None
print("%-16s %-17s %9s %9s %7s %6s %6s %6s %6s %7s %6s %8s" % (sys.argv[1], sys.argv[2], f(disagg), f(mono),
      f(j.get("speedup_over_monolithic"), 2), f(mfu), f(j["backbone_only_mfu"]), f(ratio, 2),
      sub.get("gpus", "-"), f(sub.get("speedup_over_monolithic"), 2), f(sub_ratio, 2), f(j["search_time_s"], 2)))
' "$model" "$mix" "$out"
  done
done
