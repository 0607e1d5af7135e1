#!/usr/bin/env bash
# Installs the Debian packages Tessera builds and tests with. A fast no-op when every package is
# already installed (checked with `dpkg -s`); otherwise runs `apt-get update` once and installs only
# what is missing, non-interactively. Needs root for that; fails loudly on any error.
set -euo pipefail

# The C++ build, tests and benchmarks.
core_packages=(
  build-essential cmake g++
  nlohmann-json3-dev libcli11-dev libfmt-dev
  googletest libgtest-dev libbenchmark-dev
)
# The sanitizer tree and the fuzz targets (fuzz/): clang++ with libFuzzer and the sanitizer
# runtimes. The generic names follow Debian's default clang (bookworm: clang-14 and
# libclang-rt-14-dev), so the compiler and its runtime always match.
fuzz_packages=(
  clang libclang-rt-dev
)
# The Python bindings and package (pybind11 module, torch sampler, gradient-norm hook) that later
# issues add; installed now too so every machine has one environment. python3-torch is large.
python_packages=(
  python3-dev pybind11-dev python3-numpy python3-pytest python3-torch
)
# DistTrain's data service (issue 35): gRPC and protobuf (C++ and Python), JPEG / PNG decoding,
# SentencePiece tokenization (its spm_train builds the test tokenizer).
dataservice_packages=(
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler python3-grpcio python3-protobuf
  libjpeg-dev libpng-dev libsentencepiece-dev sentencepiece pkg-config
)
# The HTML report tests render pages headless (tests/python/test_html_reports.py, scripts/browser_check.py).
browser_packages=(
  chromium fonts-dejavu-core
)

missing=()
for pkg in "${core_packages[@]}" "${fuzz_packages[@]}" "${python_packages[@]}" "${dataservice_packages[@]}" "${browser_packages[@]}"; do
  # `dpkg -s` succeeds for removed-but-configured packages too: require "install ok installed".
  dpkg -s "$pkg" 2>/dev/null | grep -x 'Status: install ok installed' >/dev/null || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

if ((EUID != 0)); then
  echo "install-deps.sh: missing Debian packages (${missing[*]}); run as root: sudo $0" >&2
  exit 1
fi

echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"
