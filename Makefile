# scprof build. `make` builds ./scprof; `make run` installs what is missing,
# builds and demonstrates; `make test` runs every test; `make bench` the
# overhead benchmark. V=1 shows the commands.
.DELETE_ON_ERROR:
.SUFFIXES:

VERSION := 0.1.0
# OUTPUT and BIN are variables so that `make check` can build a sanitized
# variant of everything beside the normal one.
OUTPUT ?= .output
BIN ?= scprof
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= cc
# clang for target bpf has been seen to run away with memory: cap it (KiB).
BPF_MEM_LIMIT ?= 4000000

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WARN := -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
	-Werror=undef
CFLAGS ?= -g -O2
USER_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE \
	-DSCPROF_VERSION='"$(VERSION)"' -Iinclude -Iuser -I$(OUTPUT) -MMD -MP
LDLIBS := -lbpf -ldw -lelf -lz -ljson-c -lm -lmicrohttpd -lncursesw
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Iinclude \
	-Ivmlinux/$(ARCH) -Wall -Wno-unused-function -MMD -MP

# user/ is one folder per layer (see README, "How the code is laid out").
LAYERS := cmd analyze collect render model util
USER_SRCS := $(foreach l,$(LAYERS),$(wildcard user/$(l)/*.c))
GEN_NAMES := $(OUTPUT)/user/model/syscall_names.c \
	$(OUTPUT)/user/model/errno_names.c
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS)) \
	$(GEN_NAMES:.c=.o)
# Everything but main: what the unit tests link against.
LIB_OBJS := $(filter-out $(OUTPUT)/user/cmd/main.o,$(USER_OBJS))

.PHONY: all
all: $(BIN)

$(BIN): $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT) $(OUTPUT)/tests $(addprefix $(OUTPUT)/user/,$(LAYERS)):
	$(Q)mkdir -p $@

$(OUTPUT)/scprof.bpf.o: bpf/scprof.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)ulimit -v $(BPF_MEM_LIMIT) && $(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/scprof.skel.h: $(OUTPUT)/scprof.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name scprof_bpf > $@

$(GEN_NAMES): $(OUTPUT)/user/model/%_names.c: user/model/gen_names.sh | $(OUTPUT)/user/model
	$(call msg,GEN,$@)
	$(Q)sh user/model/gen_names.sh "$(CC)" $(if $(filter syscall,$*),syscalls,errnos) > $@

# The skeleton is generated before any userspace object is compiled.
$(OUTPUT)/user/%.o: user/%.c $(OUTPUT)/scprof.skel.h | $(addprefix $(OUTPUT)/user/,$(LAYERS))
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -c $< -o $@

$(OUTPUT)/user/%.o: $(OUTPUT)/user/%.c | $(OUTPUT)/user/model
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Wno-missing-prototypes -c $< -o $@

# ---- workloads, tests, demo ------------------------------------------
PYTHON ?= /usr/bin/python3
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOADS := $(patsubst tests/workloads/%.c,$(OUTPUT)/workloads/%,$(WORKLOAD_SRCS))
# tests/unit/LAYER/test_MODULE.c: the unit tests mirror user/'s layers.
UNIT_SRCS := $(wildcard tests/unit/*/test_*.c)
UNIT_TESTS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))

$(OUTPUT)/workloads:
	$(Q)mkdir -p $@

$(OUTPUT)/workloads/%: tests/workloads/%.c | $(OUTPUT)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g $(WL_EXTRA) -Wall -Wextra -D_GNU_SOURCE $< -o $@ -lpthread

# --stacks: call sites that only CFI can unwind, and the same program
# stripped (no symtab, no debug info: module+0xoffset names).
$(OUTPUT)/workloads/stackmix: WL_EXTRA := -fomit-frame-pointer
WORKLOADS += $(OUTPUT)/workloads/stackmix-stripped
$(OUTPUT)/workloads/stackmix-stripped: $(OUTPUT)/workloads/stackmix
	$(call msg,STRIP,$@)
	$(Q)strip --strip-all -o $@ $<

# 32-bit (i386) workloads for the ABI tests: raw `int $$0x80` calls and no C
# library, so the compiler's -m32 is enough (no 32-bit libraries needed).
WORKLOAD32_SRCS := $(wildcard tests/workloads/m32/*.c)
WORKLOADS += $(patsubst tests/workloads/m32/%.c,$(OUTPUT)/workloads/%,$(WORKLOAD32_SRCS))

$(OUTPUT)/workloads/%: tests/workloads/m32/%.c | $(OUTPUT)/workloads
	$(call msg,CC,$@)
	$(Q)$(CC) -m32 -static -nostdlib -ffreestanding -fno-pie -no-pie \
		-fno-stack-protector -fno-asynchronous-unwind-tables -O2 -g \
		-Wall -Wextra $< -o $@

$(OUTPUT)/tests/%.o: tests/unit/%.c $(OUTPUT)/scprof.skel.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Itests/unit -Wno-missing-prototypes -c $< -o $@

$(OUTPUT)/tests/%: $(OUTPUT)/tests/%.o $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDLIBS) -lcmocka -o $@

.PHONY: deps
deps:
	$(Q).ci/install-deps

.PHONY: workloads
workloads: $(WORKLOADS)

# The demo: scprof on a program that does what the seed articles measure.
.PHONY: run
run: deps
	$(Q)$(MAKE) --no-print-directory $(BIN) workloads
	@echo
	@echo '$$ sudo ./scprof -f -- .output/workloads/demo'
	$(Q)./scprof -f -- $(OUTPUT)/workloads/demo
	@echo
	@echo 'Per-call latency percentiles and bytes moved (-U ... -S calls):'
	@echo '$$ sudo ./scprof -f -U calls,avg-time,p50,p99,bytes,name -S calls -- .output/workloads/demo'
	$(Q)./scprof -f -U calls,avg-time,p50,p99,bytes,name -S calls -- $(OUTPUT)/workloads/demo

.PHONY: unit
unit: $(UNIT_TESTS)
	$(Q)set -e; for t in $(UNIT_TESTS); do echo "  UNIT     $$t"; $$t; done

.PHONY: e2e
e2e: $(BIN) $(WORKLOADS)
	$(Q)SCPROF=$(abspath $(BIN)) WORKLOADS=$(abspath $(OUTPUT)/workloads) \
		$(PYTHON) -m pytest -q tests/e2e $(PYTEST_ARGS)

# Heavier suites, after `make test` in CI (.ci/run): each helper's target.
.PHONY: test-extra
test-extra: test-stacks-extra

# --flamegraph in headless Chromium (tests/extra/test_flamegraph_browser.py).
.PHONY: test-stacks-extra
test-stacks-extra: $(BIN) $(WORKLOADS)
	$(Q)SCPROF=$(abspath $(BIN)) WORKLOADS=$(abspath $(OUTPUT)/workloads) \
		$(PYTHON) -m pytest -q tests/extra/test_flamegraph_browser.py $(PYTEST_ARGS)

.PHONY: test
# Everything: style, unit and end-to-end tests, the same again under
# ASan+UBSan (make check), and each fuzz target for FUZZ_SECONDS.
test: deps
	$(Q)$(MAKE) --no-print-directory lint
	$(Q)$(MAKE) --no-print-directory $(BIN) $(WORKLOADS) $(UNIT_TESTS)
	$(Q)$(MAKE) --no-print-directory layers
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory e2e
	$(Q)$(MAKE) --no-print-directory check
	$(Q)$(MAKE) --no-print-directory fuzz

# ---- benchmark: `make bench`, never part of `make test` -------------
# BENCH_ARGS is passed to bench/bench.py (see bench/bench.py --help), e.g.
# make bench BENCH_ARGS='--reps 3 --json bench.json'.
BENCH_OUT := $(OUTPUT)/bench
BENCH_BINS := $(BENCH_OUT)/floor $(BENCH_OUT)/sysloop
BENCH_DEPS := $(shell sed -e 's/\#.*//' bench/deps)

$(BENCH_OUT):
	$(Q)mkdir -p $@

$(BENCH_OUT)/floor.bpf.o: bench/floor.bpf.c | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)ulimit -v $(BPF_MEM_LIMIT) && $(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BENCH_OUT)/floor.skel.h: $(BENCH_OUT)/floor.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name floor_bpf > $@

$(BENCH_OUT)/floor: bench/floor.c $(BENCH_OUT)/floor.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -I$(BENCH_OUT) $< $(LDLIBS) -o $@

$(BENCH_OUT)/sysloop: bench/sysloop.c | $(BENCH_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -Wall -Wextra -D_GNU_SOURCE $< -o $@

.PHONY: bench
bench: deps
	$(Q).ci/install-deps $(BENCH_DEPS)
	$(Q)$(MAKE) --no-print-directory $(BIN) $(BENCH_BINS)
	$(Q)$(PYTHON) bench/bench.py --scprof $(abspath $(BIN)) \
		--bin $(CURDIR)/$(BENCH_OUT) $(BENCH_ARGS)

# ---- style ----------------------------------------------------------------
LINT_SRCS := $(wildcard bpf/*.c bpf/*.h include/*.h user/*/*.c user/*/*.h \
	tests/unit/*/*.c tests/unit/*.h tests/workloads/*.c \
	tests/workloads/m32/*.c tests/fuzz/*.c \
	bench/*.c)

# Every C file as .clang-format (kernel style) has it, and user/ keeps its
# layers: includes run down only (tests/lint/layers.py).
.PHONY: lint layers
lint:
	$(call msg,LINT,clang-format)
	$(Q)clang-format --dry-run --Werror $(LINT_SRCS)
	$(call msg,LINT,layers)
	$(Q)$(PYTHON) tests/lint/layers.py

# The same from the built objects' symbols: calls run down too, and no two
# modules call each other (no circle such as a format calling back into
# the dispatcher that chose it).
layers: $(USER_OBJS)
	$(call msg,LINT,layers (calls))
	$(Q)$(PYTHON) tests/lint/layers.py $(USER_OBJS)

# ---- sanitizers and fuzzing ---------------------------------------------
SAN_CFLAGS := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all
FUZZ_CFLAGS := -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
FUZZ_SECONDS ?= 10
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZERS := $(patsubst tests/fuzz/%.c,$(OUTPUT)/fuzzers/%,$(FUZZ_SRCS))

# The unit and end-to-end tests again, against an ASan+UBSan build.
.PHONY: check
# ASan's quarantine holds freed memory back from reuse; a small one keeps
# use-after-free detection without making the memory-flatness tests fail.
# The BPF side runs without its fast paths here (SCPROF_FAST_PATHS=0, as on
# kernels before 5.15), so both BPF paths go through every e2e test.
check:
	$(Q)ASAN_OPTIONS=quarantine_size_mb=4 SCPROF_FAST_PATHS=0 \
		$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)/asan \
		BIN=$(OUTPUT)/asan/scprof CFLAGS="$(SAN_CFLAGS)" unit e2e

# Each libFuzzer target for FUZZ_SECONDS, from the seeds in tests/fuzz/seeds.
.PHONY: fuzz fuzz-run
fuzz:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)/fuzz CC=$(CLANG) \
		CFLAGS="$(FUZZ_CFLAGS)" fuzz-run

$(OUTPUT)/fuzzers/%: tests/fuzz/%.c $(LIB_OBJS)
	$(call msg,FUZZER,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -fsanitize=fuzzer $^ $(LDLIBS) -o $@

fuzz-run: $(FUZZERS)
	$(Q)set -e; for f in $(FUZZERS); do \
		n=$$(basename $$f); mkdir -p $(OUTPUT)/corpus/$$n; \
		echo "  FUZZ     $$n for $(FUZZ_SECONDS) s"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -close_fd_mask=3 \
			-print_final_stats=0 $(OUTPUT)/corpus/$$n \
			tests/fuzz/seeds/$$n 2>$(OUTPUT)/corpus/$$n.log || \
			{ tail -n 50 $(OUTPUT)/corpus/$$n.log; exit 1; }; \
	done

.PHONY: vmlinux
vmlinux:
	$(call msg,GEN,vmlinux/$(ARCH)/vmlinux.h)
	$(Q)mkdir -p vmlinux/$(ARCH)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h.tmp
	$(Q)mv vmlinux/$(ARCH)/vmlinux.h.tmp vmlinux/$(ARCH)/vmlinux.h

.PHONY: clean
clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT) $(BIN)

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/user/*/*.d $(OUTPUT)/tests/*/*.d \
	$(OUTPUT)/bench/*.d)

.SECONDARY:
