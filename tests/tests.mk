# The test fixtures: unit test binaries, target programs, libraries for the
# symbol tests, the fake CUDA libraries and the fuzzer. Included by the
# Makefile, whose variables (BUILD, CC, TS_CFLAGS, LIB, ...) it uses.

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
# The fake libcupti the GPU tests load (tests/cuda_fake), from the real
# headers, and a fake NVML.
FAKE_CUPTI   := $(if $(CUPTI_INC),$(BUILD)/tests/fake/libcupti.so.13) $(BUILD)/tests/fake/libnvidia-ml.so.1

# One library built as the container's copy and as the host's (tests/nslib).
NSSIDE_LIBS  := $(BUILD)/tests/nslib/root/libnsside.so $(BUILD)/tests/nslib/host/libnsside.so

TEST_FIXTURES := $(FAKE_CUPTI) $(UNIT_BINS) $(TARGET_BINS) $(NOFP_BINS) $(SYMTEST_LIBS) \
                 $(BUILD)/tests/targets32/spin32 $(NSSIDE_LIBS) $(BUILD)/tests/libfake_aten.so

# Targets are what the profiler is measured against: frame pointers kept,
# little inlining, debug info; the nofp ones are built as programs usually
# are: optimized, no frame pointers.
TARGET_CFLAGS := -std=gnu11 -O1 -g -fno-omit-frame-pointer -fno-inline -pthread -Wall -Wextra -Werror
NOFP_CFLAGS   := -std=gnu11 -O2 -g -fomit-frame-pointer -pthread -Wall -Wextra -Werror

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB) $(SYMTEST_LIBS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(TS_CFLAGS) -Wno-unused-parameter -fno-omit-frame-pointer -pie -fPIE \
		-o $@ $< $(LIB) $(TS_LIBS) $(CRIT_FLAGS) -ldl

$(BUILD)/tests/targets/%: tests/targets/%.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -o $@ $< -lrt

$(BUILD)/tests/libfake_aten.so: tests/fake_aten/fake_aten.cpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -shared -fPIC -o $@ $<

$(BUILD)/tests/targets/many_libs: tests/targets/many_libs.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -o $@ $< -Wl,--no-as-needed -lcriterion -lstdc++ -lelf -lz -lm

$(BUILD)/tests/targets/omp_spin: tests/targets/omp_spin.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fopenmp -o $@ $<

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

$(BUILD)/tests/nslib/%/libnsside.so: tests/nslib/nsside.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -DSIDE=$* -shared -fPIC -o $@ $<

# The container tests' root filesystem (Debian bullseye), built once; the
# tests build it too when it is missing, and skip when that fails.
.PHONY: ns-root
ns-root:
	@sh scripts/ns-root.sh $(BUILD)/ns-root

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

$(BUILD)/tests/fake/libnvidia-ml.so.1: tests/cuda_fake/fake_nvml.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=c11 -Wall -Wextra -Werror -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $<

$(BUILD)/tests/fake/libcupti.so.13: tests/cuda_fake/fake_cupti.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I$(dir $(CUPTI_INC)) -fPIC -shared \
		-Wl,-soname,libcupti.so.13 -o $@ $< -pthread -ldl

# libFuzzer on the .tsprof reader and every writer (formats/ and common/
# alone, with ASan and UBSan). `make fuzz` runs FUZZ_SECONDS (60), seeded
# by a real recording; `make test` runs it briefly (test_fuzz.sh).
FUZZ_SECONDS ?= 60
$(BUILD)/fuzz/fuzz_tsprof: tests/fuzz/fuzz_tsprof.c $(wildcard formats/*.c formats/*.h common/*)
	@mkdir -p $(@D)
	clang -g -O1 -std=c11 -D_GNU_SOURCE -I. -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -o $@ $< $(wildcard formats/*.c) $(COMMON_SRCS) -lz -lm

# The unit tests' header dependencies (written by -MMD).
-include $(UNIT_BINS:=.d)
