# Tessera: one entry point for developers and CI (.ci/run runs `make test`).
#   make deps   install the Debian packages (scripts/install-deps.sh; a no-op when all are there)
#   make build  Release build into build/ (build/bin/tessera)
#   make demo   the built-in default estimate and plan search, a multimodal plan, and validation
#               against ../shared when present
#   make test   ctest on build/, then the ASan + UBSan tree build-asan/ and ctest there
#   make asan   only the sanitizer part of `make test`
#   make bench  build/bin/tessera_bench, when the benchmarks are built
#   make clean  remove build/ and build-asan/

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

BUILD_DIR ?= build
ASAN_DIR ?= build-asan
JOBS ?= $(shell nproc)
PYTHON ?= /usr/bin/python3
VALIDATION_CSV ?= ../shared/validation/public_runs.csv

# The sanitizer tree: Debug at -O1 compiles faster than RelWithDebInfo (-O2) and keeps ASan's
# reports readable; -g1 (function names and line tables, all a sanitizer's stack trace needs)
# compiles about a third faster than -g; the benchmarks are off there.
ASAN_CMAKE_FLAGS := -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
                    -DTESSERA_SANITIZE=ON -DTESSERA_BENCH=OFF
SANITIZER_ENV := ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
CTEST_FLAGS := --output-on-failure --no-tests=error -j2

.PHONY: all deps build demo test asan bench clean
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
	if [ -f $(VALIDATION_CSV) ]; then $(BUILD_DIR)/bin/tessera validate $(VALIDATION_CSV); \
	else echo "($(VALIDATION_CSV) not found: skipping validate)"; fi

test: build
	cd $(BUILD_DIR) && ctest $(CTEST_FLAGS)
	$(MAKE) --no-print-directory asan

asan: deps
	cmake -S . -B $(ASAN_DIR) $(ASAN_CMAKE_FLAGS) -DPython_EXECUTABLE=$(PYTHON)
	cmake --build $(ASAN_DIR) -j$(JOBS)
	cd $(ASAN_DIR) && $(SANITIZER_ENV) ctest $(CTEST_FLAGS)

bench: build
	if [ -x $(BUILD_DIR)/bin/tessera_bench ]; then $(BUILD_DIR)/bin/tessera_bench; \
	else echo "no $(BUILD_DIR)/bin/tessera_bench (no benchmarks yet)"; fi

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
