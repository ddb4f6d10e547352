# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# gpuctx: BPF objects -> skeletons -> collector; emulated driver; tests.
OUTPUT := .output
BUILD := build
ARCH ?= $(shell uname -m | sed 's/x86_64/x86/')
ifneq ($(ARCH),x86)
$(error Architecture $(ARCH) is not supported yet: add bpf/vmlinux/$(ARCH)/vmlinux.h with tools/gen-vmlinux.sh)
endif
VMLINUX_H ?= bpf/vmlinux/$(ARCH)/vmlinux.h
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= gcc
VERSION := 0.1.0

CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS := -g -O2 -Wall -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Iinclude \
	-I$(dir $(VMLINUX_H)) $(CLANG_BPF_SYS_INCLUDES)
CFLAGS ?= -g -O2
CFLAGS += -D_GNU_SOURCE -Wall -Wextra -Werror=undef -Wno-unused-parameter -Iinclude -Iuser -I$(OUTPUT) \
	-DGPUCTX_VERSION='"$(VERSION)"' $(shell pkg-config --cflags libbpf 2>/dev/null)
LDLIBS := $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf) -ldw -lelf -lz -lstdc++
STATIC_LDLIBS := -Wl,-Bstatic -lbpf -ldw -lelf -lz -lstdc++ $(foreach l,lzma bz2,$(if $(wildcard /usr/lib/$(shell uname -m)-linux-gnu/lib$(l).a),-l$(l))) $(shell [ -e /usr/lib/$(shell uname -m)-linux-gnu/libzstd.a ] && echo -lzstd)

BPF_UNITS := gpuctx api guard pyraise
# user/ by stage of the data path (docs/architecture.md). The live side (collect/, agent/, cli/)
# needs libbpf and root; the pure stages also run on a trace file and are unit tested without root.
LIVE_DIRS := collect agent cli
PURE_DIRS := lib trace decode model output/report output/timeline output/html
BPF_USER_SRCS := $(foreach d,$(LIVE_DIRS),$(wildcard user/$(d)/*.c))
PURE_SRCS := $(foreach d,$(PURE_DIRS),$(wildcard user/$(d)/*.c))
USER_SRCS := $(PURE_SRCS) $(BPF_USER_SRCS)
USER_HDRS := $(wildcard user/*/*.h user/*/*/*.h)
PURE_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(PURE_SRCS))
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS))
SKELS := $(patsubst %,$(OUTPUT)/%.skel.h,$(BPF_UNITS))

UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/*/test_*.c))
WORKLOADS := $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(wildcard tests/workloads/*.c))

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all static deps test-deps unit integration test demo clean vmlinux format format-check bench \
	check-sanitize fuzz fuzz-build fuzz-regress

all: $(BUILD)/gpuctx $(BUILD)/fakegpu $(WORKLOADS)

$(OUTPUT) $(BUILD) $(BUILD)/workloads:
	$(Q)mkdir -p $@

$(OUTPUT)/%.tmp.bpf.o: bpf/%.bpf.c $(wildcard include/*.h) $(wildcard bpf/*.bpf.h) $(VMLINUX_H) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/%.bpf.o: $(OUTPUT)/%.tmp.bpf.o
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $<

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(OUTPUT)/user/%.o: user/%.c $(USER_HDRS) $(wildcard include/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(patsubst user/%.c,$(OUTPUT)/user/%.o,$(BPF_USER_SRCS)): $(SKELS)

$(BUILD)/gpuctx: $(USER_OBJS) | $(BUILD)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

static: $(BUILD)/gpuctx-static
$(BUILD)/gpuctx-static: $(USER_OBJS) | $(BUILD)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -static $^ $(STATIC_LDLIBS) -o $@

# the emulated driver: tools/fakegpu.c and its per-driver files tools/fakegpu_*.c
FAKEGPU_SRCS := $(wildcard tools/fakegpu*.c)
$(BUILD)/fakegpu: $(FAKEGPU_SRCS) $(wildcard tools/fakegpu*.h) include/gpu_uapi.h | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(shell pkg-config --cflags fuse3) $(FAKEGPU_SRCS) $(shell pkg-config --libs fuse3) -lpthread -o $@

$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h tests/unit/*/*.h) $(PURE_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -Itests/unit $(CFLAGS) $< $(PURE_OBJS) $(shell pkg-config --libs cmocka) -lz -lstdc++ -o $@

# collect/ units that need no BPF (module files, unwinding), tested with libdw
# (static pattern rules: explicit, so never passed over for the generic rule above when the
# collect/ objects are not built yet)
COLLECT_UNITS := collect/modfiles collect/unwind collect/tpformat collect/libfile
COLLECT_UNITS += collect/symsrv # unwind.c's sandboxed process (issue 27)
COLLECT_TESTS := $(filter-out test_callers_live,$(patsubst tests/unit/collect/%.c,%,\
	$(wildcard tests/unit/collect/test_*.c)))
$(patsubst %,$(BUILD)/tests/collect/%,$(COLLECT_TESTS)): $(BUILD)/tests/collect/%: \
		tests/unit/collect/%.c $(PURE_OBJS) $(patsubst %,$(OUTPUT)/user/%.o,$(COLLECT_UNITS))
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -Itests/unit $(CFLAGS) $< $(filter %.o,$^) -ldw -lelf $(shell pkg-config --libs cmocka) -lz -lstdc++ -o $@

# a live module tested by including its source (no libbpf in it)
$(BUILD)/tests/collect/test_pymem $(BUILD)/san/collect/test_pymem: user/collect/pymem.c user/collect/pymem.h

$(BUILD)/workloads/%: tests/workloads/%.c include/gpu_uapi.h | $(BUILD)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -lpthread -o $@

# The stack test's C workload again, with frame pointers (wl_blame itself has none: -O2).
$(BUILD)/workloads/wl_blame_fp: tests/workloads/wl_blame.c include/gpu_uapi.h | $(BUILD)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -fno-omit-frame-pointer $< -lpthread -o $@

all: $(BUILD)/workloads/wl_blame_fp

# The real NVIDIA driver test (tests/realdriver/nvidia.sh): its test-only preload library and
# its CUDA driver API program; the fork probe the doubles are compared with the real runtimes by
# (tests/realdriver/fork_compare.sh).
REALDRIVER_NV := $(BUILD)/realdriver/nv_redirect.so $(BUILD)/realdriver/nv_cuda \
	$(BUILD)/realdriver/forkprobe
$(BUILD)/realdriver/nv_redirect.so: tests/realdriver/nv_redirect.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -shared -fPIC $< -ldl -o $@
$(BUILD)/realdriver/nv_cuda $(BUILD)/realdriver/forkprobe: $(BUILD)/realdriver/%: tests/realdriver/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< -ldl -o $@

all: $(REALDRIVER_NV)

# The Slurm SPANK plugin (slurm/), built when Slurm's headers are installed (libslurm-dev;
# tools/install-deps.sh slurm); its job attribution is the model's own (model/jobattr.c).
# tests/slurm/run.sh (in make integration) runs it on a real Slurm when slurm-wlm is installed.
SPANK_SO := $(BUILD)/gpuctx_spank.so
ifneq ($(wildcard /usr/include/slurm/spank.h),)
all: $(SPANK_SO)
endif
$(SPANK_SO): slurm/gpuctx_spank.c user/model/jobattr.c user/model/jobattr.h | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) $(filter-out -Werror=undef,$(CFLAGS)) -fPIC -shared -fvisibility=default \
		-DGPUCTX_BIN='"$(BINDIR)/gpuctx"' slurm/gpuctx_spank.c user/model/jobattr.c -o $@

deps:
	$(Q)tools/install-deps.sh build

test-deps:
	$(Q)tools/install-deps.sh test

unit: $(UNIT_TESTS)
	$(Q)tools/check-layout.sh
	$(Q)set -e; for t in $(UNIT_TESTS); do echo "== $$t"; $$t; done

integration: all
	$(Q)tests/integration/run.sh
	$(Q)tests/integration/hardening.sh
	$(Q)tests/export/run.sh
	$(Q)tests/html/run.sh
	$(Q)tests/realdriver/nvidia.sh
	$(Q)tests/realdriver/fork_compare.sh
	$(Q)tests/realdriver/numba.sh
	$(Q)tests/slurm/run.sh

# The README's test command: installs what is missing, builds, runs every test.
test: test-deps
	$(Q)$(MAKE) --no-print-directory format-check
	$(Q)$(MAKE) --no-print-directory all unit
	$(Q)$(MAKE) --no-print-directory check-sanitize fuzz-regress
	$(Q)$(MAKE) --no-print-directory integration
	$(Q)$(MAKE) --no-print-directory check-install

# The README's demo command: trace the bundled workload and print the report.
demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo.sh

vmlinux:
	$(Q)tools/gen-vmlinux.sh /sys/kernel/btf/vmlinux $(VMLINUX_H)

# Every C source the project writes is in one format, kept by the tool (`make format` rewrites,
# `make format-check` fails on any difference; make test runs it). vmlinux.h is generated.
FORMAT_SRCS = $(sort $(wildcard bpf/*.bpf.c bpf/*.bpf.h include/*.h user/*/*.c user/*/*.h \
	user/*/*/*.c user/*/*/*.h tools/*.c tools/*.h tests/unit/*.h tests/unit/*/*.c \
	tests/unit/*/*.h tests/workloads/*.c tests/workloads/*.cc tests/workloads/lib/*.c \
	tests/doubles/*.c tests/doubles/*.h tests/realdriver/*.c tests/fuzz/*.c tests/fuzz/*.h tests/export/*.c \
	slurm/*.c bench/*.c))

format:
	$(Q)clang-format -i $(FORMAT_SRCS)

format-check:
	$(Q)clang-format --dry-run -Werror $(FORMAT_SRCS) && echo "format-check: $(words $(FORMAT_SRCS)) files ok"

clean:
	$(Q)rm -rf $(OUTPUT) $(BUILD)

# make install, uninstall, deb, check-install
include install.mk

# ---------------------------------------------------------------------------------------------
# the stack resolver's table of processes, with what it links (not in every collect/ test:
# test_pymem includes pymem.c)
STACKS_UNITS := collect/stacks collect/pymem
$(BUILD)/tests/collect/test_stacks_procs: $(patsubst %,$(OUTPUT)/user/%.o,$(STACKS_UNITS))

# the agent's units without BPF (agent/): its spool, its sync thread and cap, its pending
# trees, with what they link
SPOOL_UNITS := agent/spool agent/spool_sync agent/pending collect/jobcg
$(filter $(BUILD)/tests/agent/%,$(UNIT_TESTS)): $(BUILD)/tests/agent/%: tests/unit/agent/%.c $(PURE_OBJS) $(patsubst %,$(OUTPUT)/user/%.o,$(SPOOL_UNITS))
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -Itests/unit $(CFLAGS) $< $(filter %.o,$^) $(shell pkg-config --libs cmocka) -lz -lstdc++ -o $@

# record --from-agent's filter of the agent's node-wide records (cli/fromagent_keep.c)
$(BUILD)/tests/cli/test_fromagent_keep: tests/unit/cli/test_fromagent_keep.c $(PURE_OBJS) \
		$(OUTPUT)/user/cli/fromagent_keep.o
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -Itests/unit $(CFLAGS) $< $(filter %.o,$^) $(shell pkg-config --libs cmocka) -lz -lstdc++ -o $@

# collect/callers.c's test stubs the symboliser: no collect/ objects linked
$(BUILD)/tests/collect/test_callers_live: tests/unit/collect/test_callers_live.c $(PURE_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -Itests/unit $(CFLAGS) $< $(PURE_OBJS) $(shell pkg-config --libs cmocka) -lz -lstdc++ -o $@

# Hardening (issue 9). check-sanitize: the unit tests built with ASan and UBSan (any finding
# aborts). Fuzz targets (tests/fuzz/fuzz_*.c, libFuzzer): `make fuzz` runs each for FUZZ_TIME
# seconds, growing .output/fuzz/corpus/; `make fuzz-regress` runs each once over its checked-in
# seeds (tests/fuzz/corpus/NAME/), so a reintroduced crash fails `make test` in seconds.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_DIR := $(OUTPUT)/san
SAN_OBJS := $(patsubst user/%.c,$(SAN_DIR)/%.o,$(PURE_SRCS))
SAN_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/san/%,$(wildcard tests/unit/*/test_*.c))
FUZZ_DIR := $(OUTPUT)/fuzz
FUZZ_SRCS := $(PURE_SRCS)
FUZZ_OBJS := $(patsubst user/%.c,$(FUZZ_DIR)/%.o,$(FUZZ_SRCS))
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_CFLAGS := -g -O1 -D_GNU_SOURCE -Wall -Wno-unused-parameter -Iinclude -Iuser -Itests/fuzz \
	-DGPUCTX_VERSION='"$(VERSION)"' $(SAN_FLAGS)
FUZZ_TIME ?= 30

$(SAN_DIR)/%.o: user/%.c $(USER_HDRS) $(wildcard include/*.h)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(BUILD)/san/%: tests/unit/%.c $(wildcard tests/unit/*.h tests/unit/*/*.h) $(SAN_OBJS)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -Itests/unit $(CFLAGS) $(SAN_FLAGS) $< $(SAN_OBJS) $(shell pkg-config --libs cmocka) -lz -lstdc++ -o $@

$(patsubst %,$(BUILD)/san/collect/%,$(COLLECT_TESTS)): $(BUILD)/san/collect/%: \
		tests/unit/collect/%.c $(SAN_OBJS) $(patsubst %,$(SAN_DIR)/%.o,$(COLLECT_UNITS))
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -Itests/unit $(CFLAGS) $(SAN_FLAGS) $< $(filter %.o,$^) -ldw -lelf $(shell pkg-config --libs cmocka) -lz -lstdc++ -o $@

$(BUILD)/san/collect/test_callers_live: tests/unit/collect/test_callers_live.c $(SAN_OBJS)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -Itests/unit $(CFLAGS) $(SAN_FLAGS) $< $(SAN_OBJS) $(shell pkg-config --libs cmocka) -lz -lstdc++ -o $@

$(BUILD)/san/collect/test_stacks_procs: $(patsubst %,$(SAN_DIR)/%.o,$(STACKS_UNITS))

$(filter $(BUILD)/san/agent/%,$(SAN_TESTS)): $(BUILD)/san/agent/%: tests/unit/agent/%.c $(SAN_OBJS) \
		$(patsubst %,$(SAN_DIR)/%.o,$(SPOOL_UNITS))
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -Itests/unit $(CFLAGS) $(SAN_FLAGS) $< $(filter %.o,$^) $(shell pkg-config --libs cmocka) -lz -lstdc++ -o $@

$(BUILD)/san/cli/test_fromagent_keep: tests/unit/cli/test_fromagent_keep.c $(SAN_OBJS) \
		$(SAN_DIR)/cli/fromagent_keep.o
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -Itests/unit $(CFLAGS) $(SAN_FLAGS) $< $(filter %.o,$^) $(shell pkg-config --libs cmocka) -lz -lstdc++ -o $@

check-sanitize: $(SAN_TESTS)
	$(Q)set -e; for t in $(SAN_TESTS); do echo "== $$t"; \
		UBSAN_OPTIONS=print_stacktrace=1 $$t >/dev/null; done; echo "check-sanitize: ok"

$(FUZZ_DIR)/%.o: user/%.c $(USER_HDRS) $(wildcard include/*.h)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_common.h $(FUZZ_OBJS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) -lz -lstdc++ -o $@

fuzz-build: $(FUZZ_TARGETS)

fuzz-regress: fuzz-build
	$(Q)set -e; for t in $(FUZZ_TARGETS); do n=$$(basename $$t); \
		$$t -runs=0 tests/fuzz/corpus/$$n 2>$(FUZZ_DIR)/$$n.log || \
		{ tail -30 $(FUZZ_DIR)/$$n.log; exit 1; }; \
		echo "fuzz-regress: $$n: $$(ls tests/fuzz/corpus/$$n | wc -l) seeds ok"; done

fuzz: fuzz-build
	$(Q)set -e; for t in $(FUZZ_TARGETS); do n=$$(basename $$t); \
		mkdir -p $(FUZZ_DIR)/corpus/$$n; echo "== $$n ($(FUZZ_TIME) s)"; \
		$$t -max_total_time=$(FUZZ_TIME) -max_len=65536 -print_final_stats=1 \
			$(FUZZ_DIR)/corpus/$$n tests/fuzz/corpus/$$n 2>&1 | tail -4; done

# ---------------------------------------------------------------------------------------------
# bench: overhead benchmarks against an untraced run, empty BPF programs, bpftrace and strace
# (bench/run.py says how). Outputs under build/bench/ and .output/bench/; `make bench` builds
# everything, installs bpftrace and strace, runs bench/run.py (root, ~9 minutes) and writes
# bench/RESULTS.md. BENCH_ARGS passes options to run.py (e.g. BENCH_ARGS="--quick").
BENCH_OUT := $(OUTPUT)/bench
BENCH_BIN := $(BUILD)/bench
BENCH_UNITS := empty diag
BENCH_SKELS := $(patsubst %,$(BENCH_OUT)/%.skel.h,$(BENCH_UNITS))
BENCH_ARGS ?=

.PHONY: bench-build

$(BENCH_OUT) $(BENCH_BIN):
	$(Q)mkdir -p $@

$(BENCH_OUT)/%.tmp.bpf.o: bench/%.bpf.c bpf/tpctx.bpf.h $(VMLINUX_H) | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BENCH_OUT)/%.bpf.o: $(BENCH_OUT)/%.tmp.bpf.o
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $<

$(BENCH_OUT)/%.skel.h: $(BENCH_OUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(BENCH_BIN)/empty_loader: bench/empty_loader.c $(BENCH_SKELS) | $(BENCH_BIN)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(BENCH_OUT) $< $(LDLIBS) -o $@

$(BENCH_BIN)/loops: bench/loops.c include/gpu_uapi.h | $(BENCH_BIN)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -ldl -lpthread -o $@

$(BENCH_BIN)/forkprobe: bench/forkprobe.c | $(BENCH_BIN)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< -ldl -o $@

$(BENCH_BIN)/load_cost: bench/load_cost.c | $(BENCH_BIN)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LDLIBS) -o $@

# the integration suite checks the load budget with it (tests/integration/run.sh load_budget)
all: $(BENCH_BIN)/load_cost

bench-build: all $(BENCH_BIN)/empty_loader $(BENCH_BIN)/loops $(BENCH_BIN)/load_cost \
	$(BENCH_BIN)/forkprobe

bench: bench-build
	$(Q)tools/install-deps.sh bench
	$(Q)python3 bench/run.py $(BENCH_ARGS)
	$(Q)bench/export_bench.sh
	$(Q)python3 bench/hold.py
	$(Q)python3 bench/forkprobe.py
# ---------------------------------------------------------------------------------- end of bench

# API test doubles
# Test doubles of libcuda.so.1 and libamdhip64.so.5 over the emulated driver (tests/doubles/),
# and the api_* workloads that call them (tests/workloads/api_*.c). Built only where the CUDA
# resp. HIP headers are installed; the tracer builds without either.
# Run: LD_LIBRARY_PATH=build/doubles build/workloads/api_cuda_fork FAKEGPU_MOUNTPOINT;
# self-check of doubles and workloads (mounts fakegpu itself): tests/doubles/run.sh
CUDA_INC_DIR ?= /usr/local/cuda/include
CUDA_STUB_DIR ?= /usr/local/cuda/lib64/stubs
HIP_INC_DIR ?= /usr/include
API_CUDA_H := $(wildcard $(CUDA_INC_DIR)/cuda.h)
API_HIP_H := $(wildcard $(HIP_INC_DIR)/hip/hip_runtime_api.h)
# Distro-like code: endbr64 at every function entry; no identical-code folding, so that no two
# entry points share an address or tail-call one another; local symbols dropped (-x), so the
# non-exported entry points that cuGetProcAddress hands out are anonymous as in a stripped lib.
API_DOUBLE_CFLAGS := -O2 -g0 -fPIC -shared -fcf-protection=full -fno-ipa-icf -D_GNU_SOURCE \
	-Wall -Wextra -Wno-unused-parameter -Iinclude -Iuser
API_DOUBLE_LDFLAGS := -Wl,-x -Wl,-z,noexecstack -lpthread
API_CUDA_WORKLOADS := $(BUILD)/workloads/api_cuda_fork $(BUILD)/workloads/api_cuda_launch \
	$(BUILD)/workloads/api_cuda_fork_query
API_HIP_WORKLOADS := $(BUILD)/workloads/api_hip_fork
API_TARGETS :=

$(BUILD)/doubles:
	$(Q)mkdir -p $@

ifneq ($(API_CUDA_H),)
API_TARGETS += $(BUILD)/doubles/libcuda.so.1 $(API_CUDA_WORKLOADS)

# One file a concern, sharing the private libcuda_double.h (which lists them). -flto links them
# as one unit: the helpers they share become local, so -x drops their names as it did when they
# were static in one file, and the code is inlined as it was.
LIBCUDA_DOUBLE_SRCS := $(addprefix tests/doubles/libcuda_,state.c rm.c ctx.c mem.c api.c procaddr.c)
$(BUILD)/doubles/libcuda.so.1: $(LIBCUDA_DOUBLE_SRCS) tests/doubles/libcuda_double.h \
		include/gpu_uapi.h | $(BUILD)/doubles
	$(call msg,CC,$@)
	$(Q)$(CC) $(API_DOUBLE_CFLAGS) -flto -I$(CUDA_INC_DIR) $(LIBCUDA_DOUBLE_SRCS) \
		-Wl,-soname,libcuda.so.1 $(API_DOUBLE_LDFLAGS) -o $@

# The C++ stack workload (demangled names), built as distribution C++ is: g++ -O2, no frame pointers.
API_TARGETS += $(BUILD)/workloads/wl_blame_cxx
$(BUILD)/workloads/wl_blame_cxx: tests/workloads/wl_blame_cxx.cc | $(BUILD)/workloads
	$(call msg,CXX,$@)
	$(Q)g++ -g -O2 -Wall -I$(CUDA_INC_DIR) $< -L$(CUDA_STUB_DIR) -lcuda -o $@

# Linked against NVIDIA's stub, so NEEDED is libcuda.so.1; run with LD_LIBRARY_PATH=build/doubles.
$(API_CUDA_WORKLOADS): $(BUILD)/workloads/%: tests/workloads/%.c include/gpu_uapi.h | $(BUILD)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(CUDA_INC_DIR) $< -L$(CUDA_STUB_DIR) -lcuda -lpthread -o $@

# cuInit called by a library (as cuML or torch do) and by the program (issue 11's callers test).
API_TARGETS += $(BUILD)/workloads/libwl_cuda_init.so
$(BUILD)/workloads/libwl_cuda_init.so: tests/workloads/lib/wl_cuda_init.c | $(BUILD)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -fPIC -shared -I$(CUDA_INC_DIR) $< -L$(CUDA_STUB_DIR) -lcuda -o $@

$(BUILD)/workloads/api_cuda_caller: tests/workloads/api_cuda_caller.c include/gpu_uapi.h \
		$(BUILD)/workloads/libwl_cuda_init.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(CUDA_INC_DIR) $< -L$(BUILD)/workloads -lwl_cuda_init \
		-Wl,-rpath,'$$ORIGIN' -L$(CUDA_STUB_DIR) -lcuda -o $@
else
$(API_CUDA_WORKLOADS) $(BUILD)/workloads/api_cuda_caller:
	@echo "  SKIP     $@ (no $(CUDA_INC_DIR)/cuda.h)"
endif

ifneq ($(API_HIP_H),)
API_TARGETS += $(BUILD)/doubles/libamdhip64.so.5 $(API_HIP_WORKLOADS)

$(BUILD)/doubles/libamdhip64.so.5: tests/doubles/libhip_double.c tests/doubles/hip.map \
		include/gpu_uapi.h | $(BUILD)/doubles
	$(call msg,CC,$@)
	$(Q)$(CC) $(API_DOUBLE_CFLAGS) -D__HIP_PLATFORM_AMD__ -I$(HIP_INC_DIR) $< \
		-Wl,-soname,libamdhip64.so.5 -Wl,--version-script=tests/doubles/hip.map \
		$(API_DOUBLE_LDFLAGS) -o $@

# The real HIP runtime on the emulated driver (tests/realdriver/amd.sh)
API_TARGETS += $(BUILD)/workloads/amd_hip
$(BUILD)/workloads/amd_hip: tests/realdriver/amd_hip.c include/gpu_uapi.h | $(BUILD)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Wno-deprecated-declarations -D__HIP_PLATFORM_AMD__ $< -lamdhip64 \
		-o $@

$(API_HIP_WORKLOADS): $(BUILD)/workloads/%: tests/workloads/%.c include/gpu_uapi.h | $(BUILD)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Wno-deprecated-declarations -D__HIP_PLATFORM_AMD__ $< -lamdhip64 \
		-lpthread -o $@
else
$(API_HIP_WORKLOADS):
	@echo "  SKIP     $@ (no $(HIP_INC_DIR)/hip/hip_runtime_api.h)"
endif

all: $(API_TARGETS)
