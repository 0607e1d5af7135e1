"""The README's generated blocks (launch scripts) are what the binary prints now
(scripts/readme_examples.py regenerates them)."""
import importlib.util
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
spec = importlib.util.spec_from_file_location("readme_examples", ROOT / "scripts" / "readme_examples.py")
readme_examples = importlib.util.module_from_spec(spec)
spec.loader.exec_module(readme_examples)


@pytest.mark.parametrize("name", sorted(readme_examples.BLOCKS))
def test_readme_block_is_what_the_binary_prints(name):
    binary = os.environ.get("TESSERA_BINARY", str(ROOT / "build" / "bin" / "tessera"))
    text = (ROOT / "README.md").read_text()
    assert readme_examples.current(text, name) == readme_examples.rendered(binary, name), (
        "README block tessera:%s is stale: run scripts/readme_examples.py" % name)


def test_launch_scripts_are_valid_bash():
    text = (ROOT / "README.md").read_text()
    for name in ("launch-dense", "launch-moe"):
        body = readme_examples.current(text, name)
        script = body.split("\n", 2)[2].rsplit("```", 1)[0]
        assert script.startswith("#!/bin/bash")
        subprocess.run(["bash", "-n"], input=script, text=True, check=True, timeout=30)
