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

# libFuzzer on each target of tests/fuzz/ (docs/FUZZING.md): the MCP
# dispatcher, the memory views' parser and qq_memory write, the seed-003
# import, the transcript batch parser — built with clang in $(FUZZ_BUILD),
# one after the other, $(FUZZ_TIME) seconds each (FUZZ_TARGETS="views mcp"
# picks some). Not part of `make test` or CI (their seed corpora are:
# unit/fuzz_<target>_corpus). New inputs go to $(FUZZ_BUILD)/corpus-<target>
# (the seeds in tests/fuzz/corpus-<target> stay as they are), crashes to
# $(FUZZ_BUILD)/<target>-crash-*; a target that finds one stops, the next
# runs, and make fails at the end.
FUZZ_TARGETS ?= mcp views import transcript
fuzz:
	@scripts/deps test
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZCOR_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS)) -- --no-print-directory
	@failed=; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_BUILD)/corpus-$$t; \
		dict=; [ -f tests/fuzz/$$t.dict ] && dict=-dict=tests/fuzz/$$t.dict; \
		echo "== fuzz_$$t for $(FUZZ_TIME) s =="; \
		$(FUZZ_BUILD)/fuzz_$$t -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 $$dict \
			-artifact_prefix=$(FUZZ_BUILD)/$$t- $(FUZZ_BUILD)/corpus-$$t tests/fuzz/corpus-$$t || failed="$$failed $$t"; \
	done; \
	if [ -n "$$failed" ]; then echo "make fuzz: found something in:$$failed (see $(FUZZ_BUILD)/*-crash-*)"; exit 1; fi

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
