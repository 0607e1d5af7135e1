#!/usr/bin/env python3
"""README blocks generated from the binary: each block sits between
`<!-- tessera:NAME -->` and `<!-- /tessera:NAME -->` and is the output of the command below,
in a fenced code block. Run `scripts/readme_examples.py [build/bin/tessera]` to rewrite them;
tests/python/test_readme_examples.py fails while a block differs from what the binary prints."""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

# name -> (fence language, tessera arguments)
BLOCKS = {
    "estimate-default": ("", ["estimate"]),
    "launch-dense": ("bash", ["plan", "--quiet", "--model", "llama3-70b", "--cluster", "h100-sxm-80gb:64",
                              "--gbs", "512", "--seq", "8192", "--emit", "megatron"]),
    "launch-moe": ("bash", ["plan", "--quiet", "--model", "deepseek-v3", "--cluster", "h800:1024",
                            "--gbs", "4096", "--seq", "4096", "--emit", "megatron"]),
}


def block_pattern(name):
    return re.compile(r"(<!-- tessera:%s -->\n)(.*?)(<!-- /tessera:%s -->)" % (re.escape(name), re.escape(name)),
                      re.DOTALL)


def rendered(binary, name):
    fence, args = BLOCKS[name]
    out = subprocess.run([binary] + args, check=True, capture_output=True, text=True, timeout=120).stdout
    out = out if out.endswith("\n") else out + "\n"
    if fence:  # a script: the command as a comment
        return "```%s\n# tessera %s\n%s```\n" % (fence, " ".join(args), out)
    return "```\n$ build/bin/tessera %s\n%s```\n" % (" ".join(args), out)


def current(text, name):
    match = block_pattern(name).search(text)
    if match is None:
        raise SystemExit("README.md has no block tessera:%s" % name)
    return match.group(2)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build" / "bin" / "tessera")
    text = README.read_text()
    for name in BLOCKS:
        body = rendered(binary, name)
        current(text, name)
        text = block_pattern(name).sub(lambda m: m.group(1) + body + m.group(3), text)
    README.write_text(text)


if __name__ == "__main__":
    main()
