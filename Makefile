# trainsample — one Makefile for the profiler, its tests, demo and benchmarks.
#
#   make            build build/trainsample
#   make deps       install the Debian packages the build and tests need
#   make test       deps, then build and run every test; ends with "N passed, N failed"
#   make demo       deps, then profile the bundled example
#   make bench      overhead benchmark (prints figures)
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

TS_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I. -I$(BUILD)/gen \
             -DTRAINSAMPLE_VERSION='"$(VERSION)"' $(PKG_CFLAGS) -MMD -MP
TS_LIBS   := $(PKG_LIBS) -liberty -lm

LIB_SRCS := $(wildcard formats/*.c) $(wildcard symbolize/*.c) $(wildcard sampler/*.c) \
            cuda/gpu_reader.c
CLI_SRCS := $(wildcard cli/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
LIB      := $(BUILD)/libtrainsample.a
BIN      := $(BUILD)/trainsample
GEN      := $(BUILD)/gen/syscall_names.h

UNIT_SRCS    := $(wildcard tests/unit/test_*.c)
UNIT_BINS    := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
TARGET_SRCS  := $(wildcard tests/targets/*.c)
TARGET_BINS  := $(TARGET_SRCS:tests/targets/%.c=$(BUILD)/tests/targets/%)
# Targets without frame pointers, for DWARF unwinding; one stripped with
# its symbols in a separate debug file found through .gnu_debuglink.
NOFP_SRCS    := $(filter-out tests/nofp/libnofp.c tests/nofp/plugin.c,$(wildcard tests/nofp/*.c))
NOFP_BINS    := $(NOFP_SRCS:tests/nofp/%.c=$(BUILD)/tests/nofp/%) $(BUILD)/tests/nofp/cxx_leaf \
                $(BUILD)/tests/nofp/libnofp.so $(BUILD)/tests/nofp/stripped/nofp_shares \
                $(BUILD)/tests/nofp/libplugin_alpha.so $(BUILD)/tests/nofp/libplugin_betaa.so
# Shared libraries for the symbol tests: one linked by GNU ld, one by lld
# (whose segments have unaligned p_offset), and stripped copies of the first
# with MiniDebugInfo or with a debug file.
SYMTEST_LIBS := $(BUILD)/tests/libsymtest.so $(BUILD)/tests/libsymtest_lld.so \
                $(BUILD)/tests/libsymtest_mini.so $(BUILD)/tests/libsymtest_dbglink.so
BENCH_BINS   := $(BUILD)/bench/overhead $(BUILD)/bench/spin $(BUILD)/bench/spin_nofp \
                $(BUILD)/bench/chain $(BUILD)/bench/libchain.so $(BUILD)/bench/render

# Targets are what the profiler is measured against: frame pointers kept,
# little inlining, debug info.
TARGET_CFLAGS := -std=gnu11 -O1 -g -fno-omit-frame-pointer -fno-inline -pthread -Wall -Wextra -Werror
NOFP_CFLAGS   := -std=gnu11 -O2 -g -fomit-frame-pointer -pthread -Wall -Wextra -Werror

# The GPU agent (cuda/), built against the toolkit's CUPTI headers; no
# CUDA library is linked: it finds libcupti at run time. Without the
# headers it is not built and record says so when --gpu=on asks for it.
CUDA_HOME  ?= $(patsubst %/bin/nvcc,%,$(or $(shell command -v nvcc 2>/dev/null),/usr/local/cuda/bin/nvcc))
CUPTI_INC  := $(firstword $(wildcard $(CUDA_HOME)/include/cupti.h $(CUDA_HOME)/extras/CUPTI/include/cupti.h))
AGENT      := $(if $(CUPTI_INC),$(BUILD)/libtrainsample_cuda.so)
AGENT_SRCS := $(wildcard cuda/agent*.c) sampler/py_layout.c sampler/py_code.c sampler/py_names.c
# The fake libcupti the GPU tests load (tests/cuda_fake), from the same headers.
FAKE_CUPTI := $(if $(CUPTI_INC),$(BUILD)/tests/fake/libcupti.so.13) $(BUILD)/tests/fake/libnvidia-ml.so.1

.PHONY: all deps test check demo run-demo bench run-bench install clean fuzz gpu-check
all: $(BIN) $(AGENT)

$(BUILD)/libtrainsample_cuda.so: $(AGENT_SRCS) $(wildcard cuda/*.h) sampler/py_layout.h sampler/py_layouts_gen.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I. -I$(dir $(CUPTI_INC)) \
		-fPIC -shared -fvisibility=hidden -Wl,--no-undefined -o $@ $(AGENT_SRCS) -pthread -ldl

$(BUILD)/tests/fake/libnvidia-ml.so.1: tests/cuda_fake/fake_nvml.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=c11 -Wall -Wextra -Werror -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $<

$(BUILD)/tests/fake/libcupti.so.13: tests/cuda_fake/fake_cupti.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I$(dir $(CUPTI_INC)) -fPIC -shared \
		-Wl,-soname,libcupti.so.13 -o $@ $< -pthread -ldl

deps:
	@sh scripts/install-deps.sh

test: deps
	@$(MAKE) --no-print-directory check

check: $(BIN) $(AGENT) $(FAKE_CUPTI) $(UNIT_BINS) $(TARGET_BINS) $(NOFP_BINS) $(SYMTEST_LIBS) $(BUILD)/tests/targets32/spin32
	@sh tests/run.sh

demo: deps
	@$(MAKE) --no-print-directory run-demo

run-demo: $(BIN)
	@sh examples/demo.sh

bench: deps
	@$(MAKE) --no-print-directory run-bench

run-bench: $(BIN) $(BENCH_BINS) $(AGENT) $(FAKE_CUPTI)
	@$(BUILD)/bench/render
	@echo
	@sh bench/gpu_launch.sh
	@echo
	@sh bench/overhead.sh

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

$(BUILD)/tests/unit/%: tests/unit/%.c tests/unit/self_helpers.h tests/unit/model_helpers.h $(LIB) $(SYMTEST_LIBS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(TS_CFLAGS) -Wno-unused-parameter -fno-omit-frame-pointer -pie -fPIE \
		-o $@ $< $(LIB) $(TS_LIBS) $(CRIT_FLAGS) -ldl

$(BUILD)/tests/targets/%: tests/targets/%.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -o $@ $< -lrt

$(BUILD)/tests/nofp/libnofp.so: tests/nofp/libnofp.c
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) -shared -fPIC -o $@ $<

$(BUILD)/tests/nofp/libplugin_%.so: tests/nofp/plugin.c
	@mkdir -p $(@D)
	$(CC) $(NOFP_CFLAGS) -DNAME=$* -shared -fPIC -o $@ $<

$(BUILD)/tests/nofp/%: tests/nofp/%.c $(BUILD)/tests/nofp/libnofp.so
	$(CC) $(NOFP_CFLAGS) -o $@ $< -L$(BUILD)/tests/nofp -lnofp -Wl,-rpath,'$$ORIGIN' -ldl

$(BUILD)/tests/nofp/cxx_leaf: tests/nofp/cxx_leaf.cpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror -o $@ $<

$(BUILD)/tests/nofp/stripped/nofp_shares: $(BUILD)/tests/nofp/nofp_shares
	@mkdir -p $(@D)
	cp $(BUILD)/tests/nofp/libnofp.so $(@D)/
	objcopy --only-keep-debug $< $@.debug
	objcopy --strip-all --add-gnu-debuglink=$@.debug $< $@

# A 32-bit program without libc; where gcc cannot make one, its tests skip.
$(BUILD)/tests/targets32/spin32: tests/targets32/spin32.c
	@mkdir -p $(@D)
	-$(CC) -m32 -O1 -nostdlib -static -o $@ $<

$(BUILD)/tests/libsymtest.so: tests/unit/symtest_lib.c
	@mkdir -p $(@D)
	$(CC) -O1 -g -shared -fPIC -o $@ $<

$(BUILD)/tests/libsymtest_lld.so: tests/unit/symtest_lib.c
	@mkdir -p $(@D)
	$(CC) -O1 -g -shared -fPIC -fuse-ld=lld -o $@ $<

$(BUILD)/tests/libsymtest_mini.so: $(BUILD)/tests/libsymtest.so tests/unit/symtest_variant.sh
	sh tests/unit/symtest_variant.sh minidebuginfo $< $@

$(BUILD)/tests/libsymtest_dbglink.so: $(BUILD)/tests/libsymtest.so tests/unit/symtest_variant.sh
	sh tests/unit/symtest_variant.sh debuglink $< $@

$(BUILD)/bench/%: bench/%.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -O2 -o $@ $<

# libFuzzer on the .tsprof reader and every writer (formats/ alone, with
# ASan and UBSan). `make fuzz` runs FUZZ_SECONDS (60), seeded by a real
# recording; `make test` runs it briefly (tests/integration/test_fuzz.sh).
FUZZ_SECONDS ?= 60
$(BUILD)/fuzz/fuzz_tsprof: tests/fuzz/fuzz_tsprof.c $(wildcard formats/*.c formats/*.h)
	@mkdir -p $(@D)
	clang -g -O1 -std=c11 -D_GNU_SOURCE -I. -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -o $@ $< $(wildcard formats/*.c) -lz -lm

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

# Built as programs usually are: optimized, no frame pointers.

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d)
