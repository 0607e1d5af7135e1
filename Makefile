# Tessera: one entry point for developers and CI (.ci/run runs `make test`).
#   make deps   install the Debian packages (scripts/install-deps.sh; a no-op when all are there)
#   make build  Release build into build/ (build/bin/tessera)
#   make demo   the built-in default estimate and plan search, a multimodal plan, validation
#               against ../shared when present, and calibration on examples/calibration/
#   make test   ctest on build/, then the ASan + UBSan tree build-asan/ and ctest there
#   make asan   only the sanitizer part of `make test` (its ctest includes a short run of every
#               fuzz target: seed and regression corpora replayed, then FUZZ_CI_SECONDS of fuzzing)
#   make fuzz   every fuzz target (fuzz/) for FUZZ_SECONDS each, one after another; a crashing input
#               is written to fuzz/regression/<target>/, which every later run replays
#   make bench  build/bin/tessera_bench, when the benchmarks are built
#   make bench-limits  every documented input limit at its maximum, against 10 s and 2 GB
#               (scripts/input_limits_bench.py; exits 1 when one is over)
#   make clean  remove build/ and build-asan/

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

BUILD_DIR ?= build
ASAN_DIR ?= build-asan
JOBS ?= $(shell nproc)
PYTHON ?= /usr/bin/python3
# The shipped published runs (data/validation/, built in): a name, or any validation CSV's path.
VALIDATION_RUNS ?= public_runs

# The sanitizer tree: Debug at -O1 compiles faster than RelWithDebInfo (-O2) and keeps ASan's
# reports readable; -g1 (function names and line tables, all a sanitizer's stack trace needs)
# compiles about a third faster than -g; the benchmarks are off there. It is built with clang++ so
# the same tree also builds the libFuzzer targets (coverage needs clang's instrumentation; one tree
# instead of a third costs no extra compile of the libraries).
FUZZ_CI_SECONDS ?= 5
ASAN_CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
                    -DCMAKE_CXX_COMPILER=clang++ -DTESSERA_SANITIZE=ON -DTESSERA_BENCH=OFF \
                    -DTESSERA_FUZZ=ON -DTESSERA_FUZZ_SECONDS=$(FUZZ_CI_SECONDS)
# `make fuzz`: seconds per target. Each target's libFuzzer options (the per-input time and memory
# limits, a dictionary) come from build-asan/fuzz-options/<target>.txt, written by fuzz/CMakeLists.txt.
FUZZ_SECONDS ?= 300
SANITIZER_ENV := ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
CTEST_FLAGS := --output-on-failure --no-tests=error -j2

.PHONY: all deps build demo test asan fuzz bench bench-limits clean
all: build

deps:
	bash scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(PYTHON)
	cmake --build $(BUILD_DIR) -j$(JOBS)

demo: build
	$(BUILD_DIR)/bin/tessera estimate
	$(BUILD_DIR)/bin/tessera plan --quiet
	$(BUILD_DIR)/bin/tessera plan --model mllm-72b-gen --data caption-like --cluster h800:1296 --gbs 1920 --top 1
	$(BUILD_DIR)/bin/tessera validate $(VALIDATION_RUNS)
	$(BUILD_DIR)/bin/tessera calibrate --runs examples/calibration/fit.csv --report -o $(BUILD_DIR)/demo-profile.json
	$(BUILD_DIR)/bin/tessera validate examples/calibration/rest.csv | tail -4
	$(BUILD_DIR)/bin/tessera validate examples/calibration/rest.csv --profile $(BUILD_DIR)/demo-profile.json | tail -4

test: build
	cd $(BUILD_DIR) && ctest $(CTEST_FLAGS)
	$(MAKE) --no-print-directory asan

asan: deps
	cmake -S . -B $(ASAN_DIR) $(ASAN_CMAKE_FLAGS) -DPython_EXECUTABLE=$(PYTHON)
	cmake --build $(ASAN_DIR) -j$(JOBS)
	cd $(ASAN_DIR) && $(SANITIZER_ENV) ctest $(CTEST_FLAGS)

# Each target in turn (they share the cores); new coverage goes to build-asan/fuzz-corpus/<target>/
# (kept between runs), crashes to fuzz/regression/<target>/ (commit them: CI replays them).
fuzz: deps
	cmake -S . -B $(ASAN_DIR) $(ASAN_CMAKE_FLAGS) -DPython_EXECUTABLE=$(PYTHON)
	cmake --build $(ASAN_DIR) -j$(JOBS) --target $$(sed 's/^/fuzz_/' $(ASAN_DIR)/fuzz-targets.txt)
	status=0; for t in $$(cat $(ASAN_DIR)/fuzz-targets.txt); do \
	  mkdir -p fuzz/regression/$$t; echo "== fuzz_$$t: $(FUZZ_SECONDS) s"; \
	  $(SANITIZER_ENV) $(ASAN_DIR)/bin/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    $$(cat $(ASAN_DIR)/fuzz-options/$$t.txt) \
	    -artifact_prefix=fuzz/regression/$$t/ $(ASAN_DIR)/fuzz-corpus/$$t fuzz/corpus/$$t \
	    fuzz/regression/$$t || status=1; \
	done; exit $$status

bench: build
	if [ -x $(BUILD_DIR)/bin/tessera_bench ]; then $(BUILD_DIR)/bin/tessera_bench; \
	else echo "no $(BUILD_DIR)/bin/tessera_bench (no benchmarks yet)"; fi

bench-limits: build
	$(PYTHON) scripts/input_limits_bench.py $(BUILD_DIR)/bin/tessera

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
