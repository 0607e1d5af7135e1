"""A trainer rank that crashes and is restarted (test_data_service.py): `python
data_service_restart.py COORDINATOR RANK STATE_FILE LOG_FILE CHECKPOINT_AT CRASH_AT`. It resumes
from STATE_FILE when it exists (ServiceReader.load_state_dict, as ServiceDataset does; the reader
needs no torch, which keeps the 30 processes of the test quick), appends each micro-batch it
trains on to LOG_FILE as {"position": P, "samples": [...]}, saves state_dict() to STATE_FILE after
CHECKPOINT_AT micro-batches, and dies without cleanup (os._exit) after CRASH_AT (-1: never): the
micro-batches between the checkpoint and the crash were trained on by a run whose progress is lost,
so the restarted rank must get them again."""

import json
import os
import sys

import tessera.data as td


def main() -> None:
    coordinator, rank, state_file, log_file = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    checkpoint_at, crash_at = int(sys.argv[5]), int(sys.argv[6])
    dataset = td.ServiceReader(coordinator, rank=rank, wait_s=0.5, timeout_s=60.0)
    if os.path.exists(state_file):
        with open(state_file) as f:
            dataset.load_state_dict(json.load(f))
    trained = 0
    with open(log_file, "a") as log:
        for batch in dataset:
            log.write(json.dumps({"position": batch.position, "samples": list(batch.sample_ids)}) + "\n")
            log.flush()
            trained += 1
            if trained == checkpoint_at:
                with open(state_file, "w") as f:
                    json.dump(dataset.state_dict(), f)
            if trained == crash_at:
                os._exit(3)


if __name__ == "__main__":
    main()
