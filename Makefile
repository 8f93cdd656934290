# trainsample — one Makefile for the profiler, its tests, demo and benchmarks.
#
#   make            build build/trainsample
#   make deps       install the Debian packages the build and tests need
#   make test       deps, then build and run every test; ends with "N passed, N failed"
#   make test-quick unit tests and a few scripts, about a minute (tests/run.sh NAME... for others)
#   make check-sanitize  ASan/UBSan build in build/san: unit tests and a short
#                   integration subset (also part of make test)
#   make demo       deps, then profile the bundled example
#   make bench      overhead benchmark (prints figures)
#   make sid-root   a Debian sid root with Python 3.14 and 3.15 for the tests
#   make sid-root-torch   the same root with python3-torch
#   make install PREFIX=/usr/local
#   make clean

VERSION  := 0.1.0
PREFIX   ?= /usr/local
CC       ?= cc
CFLAGS   ?= -O2 -g
BUILD    := build
PKGS     := libelf libdw zlib libunwind-generic liblzma

# pkg-config runs once per make invocation; `test` and `demo` re-enter make
# after `deps` so a fresh machine gets the flags of what deps installed.
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CRIT_FLAGS := $(shell pkg-config --cflags --libs criterion 2>/dev/null)

# A machine without the build's libraries is told what to run, not shown
# a compiler's "gelf.h: No such file or directory". The goals that install
# them first (test, demo re-enter make afterwards) are let through.
DEPS_OK := $(shell pkg-config --exists $(PKGS) 2>/dev/null && echo yes)
ifneq ($(DEPS_OK),yes)
ifneq ($(filter-out deps test demo clean sid-root sid-root-torch,$(or $(MAKECMDGOALS),all)),)
$(error the build's libraries are missing (pkg-config finds no $(PKGS)): run `make deps` first (make test and make demo do it themselves))
endif
endif

TS_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I. -I$(BUILD)/gen \
             -DTRAINSAMPLE_VERSION='"$(VERSION)"' $(PKG_CFLAGS) -MMD -MP
TS_LIBS   := $(PKG_LIBS) -liberty -lm -pthread

# Each folder's sources; cuda/agent/ is the in-process agent, built apart.
COMMON_SRCS := $(wildcard common/*.c)
PYREAD_SRCS := $(wildcard symbolize/python/*.c)
LIB_SRCS := $(COMMON_SRCS) $(wildcard formats/*.c) $(wildcard symbolize/*.c) $(PYREAD_SRCS) \
            $(wildcard cuda/*.c) $(wildcard sampler/*.c) $(wildcard sampler/python/*.c) \
            $(wildcard analysis/*.c)
CLI_SRCS := $(wildcard cli/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
LIB      := $(BUILD)/libtrainsample.a
BIN      := $(BUILD)/trainsample
GEN      := $(BUILD)/gen/syscall_names.h

BENCH_BINS   := $(BUILD)/bench/overhead $(BUILD)/bench/spin $(BUILD)/bench/spin_nofp \
                $(BUILD)/bench/chain $(BUILD)/bench/libchain.so $(BUILD)/bench/render \
                $(BUILD)/bench/blocked

# The GPU agent (cuda/agent/), built against the toolkit's CUPTI headers; no
# CUDA library is linked: it finds libcupti at run time. Without the
# headers it is not built and record says so when --gpu=on asks for it.
CUDA_HOME  ?= $(patsubst %/bin/nvcc,%,$(or $(shell command -v nvcc 2>/dev/null),/usr/local/cuda/bin/nvcc))
CUPTI_INC  := $(firstword $(wildcard $(CUDA_HOME)/include/cupti.h $(CUDA_HOME)/extras/CUPTI/include/cupti.h))
AGENT      := $(if $(CUPTI_INC),$(BUILD)/libtrainsample_cuda.so)
AGENT_SRCS := $(wildcard cuda/agent/*.c) $(PYREAD_SRCS) $(COMMON_SRCS)

.DEFAULT_GOAL := all
include tests/tests.mk

.PHONY: all deps test check check-build check-sanitize sanitize-build demo run-demo bench run-bench install clean fuzz \
        docs-options \
        gpu-check sid-root sid-root-torch
all: $(BIN) $(AGENT)

$(BUILD)/libtrainsample_cuda.so: $(AGENT_SRCS) $(wildcard cuda/agent/*.h) cuda/gpu_record.h \
		$(wildcard symbolize/python/*.h) common/common.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I. -I$(dir $(CUPTI_INC)) \
		-fPIC -shared -fvisibility=hidden -Wl,--no-undefined -o $@ $(AGENT_SRCS) -pthread -ldl

deps:
	@sh scripts/install-deps.sh

# The sid root is tried, not required: without it (no network, no root)
# the tests of Python 3.14 and 3.15 skip and say why. It is fetched while
# the build runs on every CPU, and so is the container tests' bullseye root
# (each took most of a minute of a fresh clone's 20, one after the other);
# what they printed follows the build's.
JOBS := $(shell nproc 2>/dev/null || echo 1)
test: deps
	@mkdir -p $(BUILD); \
	$(MAKE) --no-print-directory sid-root >$(BUILD)/sid-root.out 2>&1 & sid=$$!; \
	sh scripts/ns-root.sh $(BUILD)/ns-root >$(BUILD)/ns-root.out 2>&1 & ns=$$!; \
	$(MAKE) --no-print-directory -j$(JOBS) check-build; built=$$?; \
	[ $$built = 0 ] && $(MAKE) --no-print-directory -j$(JOBS) sanitize-build \
		>$(BUILD)/sanitize-build.out 2>&1; \
	wait $$sid $$ns; cat $(BUILD)/sid-root.out $(BUILD)/ns-root.out; \
	[ $$built = 0 ] || exit $$built; \
	$(MAKE) --no-print-directory check

# Python 3.14 and 3.15 come from Debian sid, debootstrapped into build/
# once (a stamp file marks it done; about 50 s and 550 MB); the host's
# packages and apt sources are not touched. Torch (for 3.14) is its own
# step on top (about 2 minutes more, 2.2 GB in all).
SID_ROOT := $(BUILD)/sid-root
sid-root: $(SID_ROOT)/.stamp
sid-root-torch: $(SID_ROOT)/.stamp-torch
$(SID_ROOT)/.stamp:
	@sh scripts/sid-root.sh $(SID_ROOT)
$(SID_ROOT)/.stamp-torch: $(SID_ROOT)/.stamp
	@sh scripts/sid-root.sh $(SID_ROOT) torch

check-build: $(BIN) $(AGENT) $(TEST_FIXTURES)
check: check-build
	@sh tests/run.sh

# For the edit-compile-test loop (about a minute): the unit tests (the
# writers on recordings made in them among them), the layering, report's
# checks and pyenv 3.12's Python and native checks with 10 launches.
# make test (every check) before committing.
test-quick: check-build
	@TEST_QUICK=1 ONLY=pyenv-3.12 sh tests/run.sh unit layers report python

# The unit tests and a few record/report/dump runs with trainsample built
# with ASan and UBSan (tests/integration/test_sanitize.sh, which make test
# runs too); the targets are the normal build's.
check-sanitize: $(BIN) $(TEST_FIXTURES)
	@sh tests/integration/test_sanitize.sh

# That build (build/san) alone: make test makes it while the roots above
# are fetched (a fresh clone waited a minute for them with nothing to
# do), and test_sanitize.sh finds it made; its errors are the script's to
# tell. -O1 is what the sanitizers are run at.
SAN_BUILD := build/san
SAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
sanitize-build:
	@env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $(MAKE) -s -j$(JOBS) BUILD=$(SAN_BUILD) \
		CFLAGS="$(SAN_CFLAGS)" $(SAN_BUILD)/trainsample $(UNIT_SRCS:tests/unit/%.c=$(SAN_BUILD)/tests/unit/%)

demo: deps
	@$(MAKE) --no-print-directory run-demo

run-demo: $(BIN)
	@sh examples/demo.sh

bench: deps
	@$(MAKE) --no-print-directory run-bench

run-bench: $(BIN) $(BENCH_BINS) $(AGENT) $(FAKE_CUPTI) $(BUILD)/tests/targets/thread_storm \
	   $(BUILD)/tests/targets/syscall_loop
	@$(BUILD)/bench/render
	@echo
	@sh bench/gpu_launch.sh
	@echo
	@sh bench/blocked.sh
	@echo
	@sh bench/storm.sh
	@echo
	@sh bench/memory.sh
	@echo
	@sh bench/many_functions.sh
	@echo
	@sh bench/contended.sh
	@echo
	@sh bench/subprocesses.sh
	@echo
	@sh bench/lean.sh
	@echo
	@sh bench/overhead.sh

# docs/options.md is printed from the option table (cli/option_table.c);
# test_cli.sh fails when the committed page differs from what it prints.
docs-options: $(BIN)
	$(BIN) --help-markdown >docs/options.md

install: $(BIN) $(AGENT)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/trainsample
	$(if $(AGENT),install -d $(DESTDIR)$(PREFIX)/lib/trainsample && \
		install -m 0644 $(AGENT) $(DESTDIR)$(PREFIX)/lib/trainsample/)

clean:
	rm -rf $(BUILD)

$(BIN): $(CLI_OBJS) $(LIB)
	$(CC) $(CFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(TS_LIBS)

$(LIB): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/obj/%.o: %.c | $(GEN)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(TS_CFLAGS) -c $< -o $@

# The flamegraph's script, formats/flamegraph.js, is taken in by .incbin
# (formats/flamegraph_script.c), which the compilers' -MMD does not list.
$(BUILD)/obj/formats/flamegraph_script.o $(BUILD)/fuzz/fuzz_tsprof: formats/flamegraph.js

# Syscall names for idle frames, generated from the kernel's own header.
$(GEN): scripts/gen-syscall-names.sh
	@mkdir -p $(@D)
	sh scripts/gen-syscall-names.sh > $@.tmp && mv $@.tmp $@

$(BUILD)/bench/%: bench/%.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -O2 -o $@ $<

# The real CUDA path where there is a GPU (tests/cuda): builds its programs
# with nvcc, runs them under record --gpu=on, checks and prints the cost.
gpu-check: $(BIN) $(AGENT)
	@sh tests/cuda/gpu_check.sh

fuzz: deps
	@$(MAKE) --no-print-directory $(BUILD)/fuzz/fuzz_tsprof $(BIN) $(TARGET_BINS)
	@sh tests/fuzz/run.sh $(FUZZ_SECONDS)

# The render benchmark links the model and its writers.
$(BUILD)/bench/render: bench/render.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(TS_CFLAGS) -o $@ $< $(LIB) $(TS_LIBS)

# The same spin without frame pointers, and a deep chain through a library
# without them: what DWARF unwinding costs.
$(BUILD)/bench/spin_nofp: bench/spin.c
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) -o $@ $<

$(BUILD)/bench/libchain.so: bench/libchain.c
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) -shared -fPIC -o $@ $<

$(BUILD)/bench/chain: bench/chain.c $(BUILD)/bench/libchain.so
	$(CC) $(NOFP_CFLAGS) -o $@ $< -L$(BUILD)/bench -lchain -Wl,-rpath,'$$ORIGIN'

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d)
