# The commands the README tells a newcomer to type. CMake does the building.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
ZCOR_DIR   ?= zcor-data
FUZZ_BUILD ?= build-fuzz
FUZZ_TIME  ?= 60

.PHONY: all build run demo test bench fuzz clean deps

all: build

deps:
	@scripts/deps build

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

# Serves a memory directory (./zcor-data, created on first use): the URL
# with its token is printed; Ctrl-C stops.
run: build
	@$(BUILD)/zcor --dir $(ZCOR_DIR) serve

# Shows the tools working through the CLI on ./zcor-data.
demo: build
	@scripts/demo $(BUILD)/zcor $(ZCOR_DIR)

test:
	@scripts/deps test
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZCOR_WERROR=ON >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DZCOR_SANITIZE=ON -DZCOR_WERROR=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS) -- --no-print-directory
	@echo "== unit tests under ASan + UBSan =="
	@cd $(ASAN_BUILD) && ctest --output-on-failure -L unit -j $(JOBS)
	@echo "== all tests on the release build (unit, crash, end-to-end, browser) =="
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	@bench/run $(BUILD)

# libFuzzer on the MCP JSON-RPC dispatcher and tool-argument validation
# (tests/fuzz/fuzz_mcp.c), built with clang in $(FUZZ_BUILD), for
# $(FUZZ_TIME) seconds. Not part of `make test` or CI. New inputs go to
# $(FUZZ_BUILD)/corpus (the seeds in tests/fuzz/corpus stay as they are),
# crashes to $(FUZZ_BUILD)/crash-*.
fuzz:
	@scripts/deps test
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZCOR_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_mcp -- --no-print-directory
	@mkdir -p $(FUZZ_BUILD)/corpus
	$(FUZZ_BUILD)/fuzz_mcp -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=4096 \
		-dict=tests/fuzz/mcp.dict -artifact_prefix=$(FUZZ_BUILD)/ \
		$(FUZZ_BUILD)/corpus tests/fuzz/corpus

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
