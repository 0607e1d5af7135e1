"""examples/multimodal_service.py end to end: a synthetic image + text set served by a coordinator
and two workers to two trainer ranks of a small LLaVA-like model, every sample trained on once."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BINARY = os.environ.get("TESSERA_BINARY", str(ROOT / "build" / "bin" / "tessera"))


def test_the_multimodal_example_trains_every_sample_once():
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "multimodal_service.py"), "--samples", "40",
                        "--binary", BINARY], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[-1] == "every sample trained on exactly once: True"
    assert sum(int(l.split()[4]) for l in lines if l.startswith("rank ")) == 40  # "rank R: M micro-batches, N samples"
