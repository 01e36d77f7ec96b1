# The two commands a user needs: `make serve` and `make test`. Both set up a fresh
# Debian/Ubuntu machine first (scripts/setup.sh installs only what is missing).
BUILD ?= build
JOBS ?= $(shell nproc)
MODEL ?= Qwen/Qwen3-VL-2B-Instruct
# Also accepted as "model", so that the README's examples work with MODEL=/path/to/folder.
MODEL_ALIAS ?= Qwen/Qwen3-VL-2B-Instruct
HOST ?= 127.0.0.1
PORT ?= 8080
# Further `qvl serve` flags, e.g. SERVE_ARGS="--dtype w8a8 --parallel 4".
SERVE_ARGS ?=
# `make bench`: further `qvl bench` flags; REPORT=FILE saves the report as JSON instead of
# printing the table; BASELINE=FILE compares with an earlier report (exit status 3 when a
# stage is slower than --max-slowdown allows).
BENCH_ARGS ?=
REPORT ?=
BASELINE ?=

.PHONY: all setup build test serve bench format clean

all: build

setup:
	@scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

test: build
	@scripts/run_tests.sh $(BUILD)

serve: build
	./$(BUILD)/qvl serve -m $(MODEL) $(if $(MODEL_ALIAS),--model-alias $(MODEL_ALIAS)) --host $(HOST) --port $(PORT) $(SERVE_ARGS)

bench: build
	$(if $(and $(REPORT),$(filter $(REPORT),$(BASELINE))),$(error REPORT would overwrite BASELINE before it is read: name another file))
	@./$(BUILD)/qvl bench -m $(MODEL) --image bench/bench-1024x768.jpg $(BENCH_ARGS) \
	  $(if $(BASELINE),--baseline $(BASELINE)) $(if $(REPORT),--json > $(REPORT))

format:
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
