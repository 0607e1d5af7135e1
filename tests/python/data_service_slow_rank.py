"""A slow trainer rank for the data service's memory test (test_data_service.py): `python
data_service_slow_rank.py COORDINATOR RANK STEP_S`. It reads its micro-batches with
tessera.data.ServiceReader, sleeping STEP_S per micro-batch (a slow training step), and prints
its peak resident memory (VmHWM) and the largest micro-batch it held, as JSON."""

import json
import sys
import time
from pathlib import Path

import tessera.data as td


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    coordinator, rank, step_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    largest = 0
    for batch in td.ServiceReader(coordinator, rank=rank, wait_s=0.5, timeout_s=60.0):
        largest = max(largest, batch.ByteSize())
        time.sleep(step_s)
    print(json.dumps({"peak_rss_mb": peak_rss_mb(), "largest_microbatch_mb": largest / 1e6}))


if __name__ == "__main__":
    main()
