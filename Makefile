# scprof build. `make` builds ./scprof; `make run` installs what is missing,
# builds and demonstrates; `make test` runs every test; `make bench` the
# overhead benchmark. V=1 shows the commands.
.DELETE_ON_ERROR:
.SUFFIXES:

VERSION := 0.1.0
# The git revision built from ("unknown" outside a git checkout, e.g. from a
# tarball): `scprof --version` prints it. Only a checkout's own top level
# counts, not a git repository the tarball happens to be unpacked in.
GIT_REV := $(shell [ "$$(git -C $(CURDIR) rev-parse --show-toplevel 2>/dev/null)" = \
	"$(CURDIR)" ] && git -C $(CURDIR) describe --always --dirty 2>/dev/null || echo unknown)
# OUTPUT and BIN are variables so that `make check` can build a sanitized
# variant of everything beside the normal one.
OUTPUT ?= .output
BIN ?= scprof
# The architecture built for: this machine's, or another with a cross
# compiler (make static-arm64: ARCH=arm64 CROSS=aarch64-linux-gnu-). It
# picks vmlinux/$(ARCH)/vmlinux.h and the BPF programs' registers; the
# syscall names come from CC's headers.
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
CROSS ?=
CLANG ?= clang
BPFTOOL ?= bpftool
PROTOC_C ?= protoc-c
CC ?= cc
ifneq ($(CROSS),)
CC := $(CROSS)gcc
endif
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
	-DSCPROF_VERSION='"$(VERSION)"' -Iinclude -Iuser -I$(OUTPUT) \
	-I$(OUTPUT)/proto -MMD -MP
LDLIBS := -lbpf -ldw -lelf -lz -ljson-c -lm -lmicrohttpd -lncursesw -lyaml -lcrypt -lgnutls -liberty \
	-lprotobuf-c -lcurl -lpthread
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Iinclude \
	-Ivmlinux/$(ARCH) -Wall -Wno-unused-function -MMD -MP

# user/ is one folder per layer (see docs/HACKING.md).
LAYERS := cmd analyze collect render model util
USER_SRCS := $(foreach l,$(LAYERS),$(wildcard user/$(l)/*.c))
GEN_NAMES := $(OUTPUT)/user/model/syscall_names.c \
	$(OUTPUT)/user/model/errno_names.c
# Built-in terminfo entries, for top on a host with no terminfo database.
GEN_TERMINFO := $(OUTPUT)/user/util/terminfo_data.c
# strace's syscall classes, for -e trace=%CLASS (user/model/trace_set.c).
# They number x86's calls; another architecture's are numbered by name from
# its own table (GEN_NATIVE).
GEN_CLASSES := $(OUTPUT)/user/model/trace_classes.c
# pprof's profile.proto (--pprof, user/render/pprof.c), as C by protoc-c:
# generated here, never committed. Its object is in render's folder, the
# layer that uses it.
GEN_PROTO := $(OUTPUT)/proto/profile.pb-c.c $(OUTPUT)/proto/profile.pb-c.h
PROTO_OBJ := $(OUTPUT)/user/render/profile.pb-c.o
# OTLP's metrics protos (the daemon's --otlp-endpoint, user/render/otlp.c),
# vendored in user/render/otlp/ (its README says from where), generated the
# same way. protoc-c 1.4 refuses proto3's `optional` (histograms' sum, min
# and max): it is taken out of a copy first, which changes no field's
# number or wire type, only that a zero is not sent (the renderer sends no
# min or max, and a sum of 0 only with a count of 0).
OTLP_PROTOS := common/v1/common resource/v1/resource metrics/v1/metrics \
	collector/metrics/v1/metrics_service
OTLP_GEN_DIR := $(OUTPUT)/proto/opentelemetry/proto
GEN_OTLP := $(foreach p,$(OTLP_PROTOS),$(OTLP_GEN_DIR)/$(p).pb-c.c $(OTLP_GEN_DIR)/$(p).pb-c.h)
OTLP_OBJS := $(foreach p,$(OTLP_PROTOS),$(OUTPUT)/user/render/otlp_$(notdir $(p)).pb-c.o)
GEN_NATIVE := $(if $(filter x86,$(ARCH)),,$(OUTPUT)/user/model/syscalls.txt)
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS)) \
	$(GEN_NAMES:.c=.o) $(GEN_TERMINFO:.c=.o) $(GEN_CLASSES:.c=.o) \
	$(PROTO_OBJ) $(OTLP_OBJS)
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

# The same programs built for kernels that lack a facility the default
# build relies on (bpf/task.bpf.h), opened through the default skeleton:
# their maps, programs and global data must be alike (same_layout.sh).
$(OUTPUT)/scprof_legacy.bpf.o: bpf/scprof.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)ulimit -v $(BPF_MEM_LIMIT) && $(CLANG) $(BPF_CFLAGS) -DSCPROF_LEGACY -c $< -o $@

$(OUTPUT)/scprof_legacy.skel.h: $(OUTPUT)/scprof_legacy.bpf.o $(OUTPUT)/scprof.skel.h bpf/same_layout.sh
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name scprof_legacy_bpf > $@.tmp
	$(Q)sh bpf/same_layout.sh $(OUTPUT)/scprof.skel.h $@.tmp
	$(Q)mv $@.tmp $@

$(GEN_NAMES): $(OUTPUT)/user/model/%_names.c: user/model/gen_names.sh | $(OUTPUT)/user/model
	$(call msg,GEN,$@)
	$(Q)sh user/model/gen_names.sh "$(CC)" $(if $(filter syscall,$*),syscalls,errnos) > $@

$(GEN_TERMINFO): user/util/gen_terminfo.sh | $(OUTPUT)/user/util
	$(call msg,GEN,$@)
	$(Q)sh user/util/gen_terminfo.sh > $@

# scprof_version.h holds the revision; rewritten only when it changes, so
# that only what includes it is rebuilt.
$(OUTPUT)/scprof_version.h: FORCE | $(OUTPUT)
	$(Q)printf '#define SCPROF_GIT_REV "%s"\n' '$(GIT_REV)' > $@.tmp
	$(Q)cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

.PHONY: FORCE
FORCE:
$(GEN_CLASSES): user/model/gen_classes.sh user/model/trace_classes.txt $(GEN_NATIVE) | $(OUTPUT)/user/model
	$(call msg,GEN,$@)
	$(Q)sh user/model/gen_classes.sh user/model/trace_classes.txt $(GEN_NATIVE) > $@

$(OUTPUT)/user/model/syscalls.txt: user/model/gen_names.sh | $(OUTPUT)/user/model
	$(call msg,GEN,$@)
	$(Q)sh user/model/gen_names.sh "$(CC)" list > $@

$(GEN_PROTO) &: user/render/profile.proto
	$(call msg,GEN,$(OUTPUT)/proto/profile.pb-c.[ch])
	$(Q)mkdir -p $(OUTPUT)/proto
	$(Q)$(PROTOC_C) --proto_path=user/render --c_out=$(OUTPUT)/proto $<

$(PROTO_OBJ): $(OUTPUT)/proto/profile.pb-c.c | $(OUTPUT)/user/render
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Wno-missing-prototypes -c $< -o $@

$(GEN_OTLP) &: $(foreach p,$(OTLP_PROTOS),user/render/otlp/opentelemetry/proto/$(p).proto)
	$(call msg,GEN,$(OTLP_GEN_DIR)/*.pb-c.[ch])
	$(Q)rm -rf $(OUTPUT)/otlp-src && mkdir -p $(OUTPUT)/otlp-src $(OUTPUT)/proto
	$(Q)cp -r user/render/otlp/opentelemetry $(OUTPUT)/otlp-src/
	$(Q)sed -i 's/^\([[:space:]]*\)optional /\1/' \
		$(OUTPUT)/otlp-src/opentelemetry/proto/metrics/v1/metrics.proto
	$(Q)$(PROTOC_C) --proto_path=$(OUTPUT)/otlp-src --c_out=$(OUTPUT)/proto \
		$(foreach p,$(OTLP_PROTOS),$(OUTPUT)/otlp-src/opentelemetry/proto/$(p).proto)

$(OUTPUT)/user/render/otlp_%.pb-c.o: $(GEN_OTLP) | $(OUTPUT)/user/render
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -Wno-missing-prototypes -c \
		$(filter %/$*.pb-c.c,$(GEN_OTLP)) -o $@

# The skeletons (and the generated protobuf header) are there before any
# userspace object is compiled.
$(OUTPUT)/user/%.o: user/%.c $(OUTPUT)/scprof.skel.h $(OUTPUT)/scprof_legacy.skel.h | $(OUTPUT)/scprof_version.h $(OUTPUT)/proto/profile.pb-c.h $(GEN_OTLP) $(addprefix $(OUTPUT)/user/,$(LAYERS))
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

# A C++ program (mangled names for --stacks to demangle).
WORKLOADS += $(OUTPUT)/workloads/ledger
$(OUTPUT)/workloads/%: tests/workloads/%.cpp | $(OUTPUT)/workloads
	$(call msg,CXX,$@)
	$(Q)$(CXX) -O2 -g -Wall -Wextra $< -o $@

# A runc container's job: static, its bundle's root holds only it.
$(OUTPUT)/workloads/ctrjob: WL_EXTRA := -static

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

$(OUTPUT)/tests/%.o: tests/unit/%.c $(OUTPUT)/scprof.skel.h | $(OUTPUT)/scprof_version.h $(OUTPUT)/proto/profile.pb-c.h $(GEN_OTLP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -Itests/unit -Wno-missing-prototypes -c $< -o $@

$(OUTPUT)/tests/%: $(OUTPUT)/tests/%.o $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(USER_CFLAGS) $^ $(LDLIBS) -lcmocka -o $@

# The Debian packages each kind of target needs, installed when missing
# (.ci/install-deps: run, test, extra, bench).
.PHONY: deps deps-test deps-extra
deps:
	$(Q).ci/install-deps run
deps-test:
	$(Q).ci/install-deps test
deps-extra:
	$(Q).ci/install-deps extra

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

.PHONY: e2e test-soak
E2E_FILES ?= tests/e2e
# The soak-marked tests (long runs under churn or load, further variants)
# are left out of make e2e and run by make test-soak, in test-extra;
# E2E_MARK= runs them all.
E2E_MARK ?= not soak
e2e: $(BIN) $(WORKLOADS)
	$(Q)SCPROF=$(abspath $(BIN)) WORKLOADS=$(abspath $(OUTPUT)/workloads) \
		$(PYTHON) -m pytest -q -m "$(E2E_MARK)" $(E2E_FILES) $(PYTEST_ARGS)

test-soak: $(BIN) $(WORKLOADS)
	$(Q)$(MAKE) --no-print-directory E2E_MARK=soak e2e
test-extra: test-soak

# What the tests run, built with every CPU (make test, make check).
JOBS ?= $(shell nproc)
.PHONY: test-build
test-build: $(BIN) $(WORKLOADS) $(UNIT_TESTS)

# Heavier suites, after `make test` in CI (.ci/run): each helper's target.
.PHONY: test-extra
test-extra: deps-extra
test-extra: test-stacks-extra

# --flamegraph in headless Chromium (tests/extra/test_flamegraph_browser.py).
.PHONY: test-stacks-extra
test-stacks-extra: deps-extra
	$(Q)$(MAKE) --no-print-directory $(BIN) $(WORKLOADS)
	$(Q)SCPROF=$(abspath $(BIN)) WORKLOADS=$(abspath $(OUTPUT)/workloads) \
		$(PYTHON) -m pytest -q tests/extra/test_flamegraph_browser.py $(PYTEST_ARGS)

# A real OpenTelemetry Collector, built from the collector's Go modules
# (tests/otelcol: the components of both tests below) with the Go first in
# PATH (1.26; Debian 12's golang-go is too old), kept in $(OUTPUT)/otelcol
# and rebuilt only when its sources change (minutes, the first time).
GO ?= go
OTELCOL := $(OUTPUT)/otelcol/otelcol
$(OTELCOL): $(wildcard tests/otelcol/*.go) tests/otelcol/go.mod tests/otelcol/go.sum
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cd tests/otelcol && $(GO) build -trimpath -o $(abspath $@) .

# daemon --otlp-endpoint against that collector (tests/otlp/test_collector.py:
# its OTLP receiver, file and Prometheus exporters).

.PHONY: test-otlp
test-otlp: deps-test
	$(Q)$(MAKE) --no-print-directory $(BIN) $(WORKLOADS) $(OTELCOL)
	$(Q)SCPROF=$(abspath $(BIN)) WORKLOADS=$(abspath $(OUTPUT)/workloads) \
		OTELCOL=$(abspath $(OTELCOL)) \
		$(PYTHON) -m pytest -q -p no:cacheprovider tests/otlp $(PYTEST_ARGS)
test-extra: test-otlp

.PHONY: test
# Style, unit and end-to-end tests (less the soak ones) and each fuzz
# target for FUZZ_SECONDS: about 14 minutes here. The heavier suites (soak
# tests, the whole suite under ASan+UBSan, other kernels, packaging) are
# make test-extra's; make check is a quicker ASan pass of its own.
test: deps-test
	$(Q)$(MAKE) --no-print-directory lint
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) test-build
	$(Q)$(MAKE) --no-print-directory layers
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory bench-test
	$(Q)$(MAKE) --no-print-directory test-pkg-quick
	$(Q)$(MAKE) --no-print-directory e2e
	$(Q)$(MAKE) --no-print-directory fuzz

# ---- benchmark: `make bench`, never part of `make test` -------------
# BENCH_ARGS is passed to bench/bench.py (see bench/bench.py --help), e.g.
# make bench BENCH_ARGS='--reps 3 --sections services', or --quick. Sections:
# loops, services, split, budget, churn, all by default. Results in
# $(BENCH_OUT)/bench.json and services.svg, compared with bench/baseline.json
# (exit status 3 when a figure got dearer); BENCH_ARGS=--readme also writes
# them into docs/overhead.md.
BENCH_OUT := $(OUTPUT)/bench
BENCH_BINS := $(BENCH_OUT)/floor $(BENCH_OUT)/sysloop

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
bench:
	$(Q).ci/install-deps bench
	$(Q)$(MAKE) --no-print-directory $(BIN) $(BENCH_BINS)
	$(Q)$(PYTHON) bench/bench.py --scprof $(abspath $(BIN)) \
		--bin $(CURDIR)/$(BENCH_OUT) --out $(CURDIR)/$(BENCH_OUT) \
		$(BENCH_ARGS)

# The benchmark's own logic (parsers, baseline comparison, chart), measuring
# nothing: quick, no root.
.PHONY: bench-test
bench-test:
	$(Q)$(PYTHON) -m pytest -q -p no:cacheprovider bench/test_bench.py $(PYTEST_ARGS)

# ---- fleet simulation: make fleet-sim, standalone --------------------------
# Five daemons (-a), each in a network namespace of its own on a bridge,
# scraped by one Prometheus (Debian's) and pushing OTLP to one
# OpenTelemetry Collector ($(OTELCOL), built with the Go first in PATH),
# for FLEET_SECONDS (75) with a light workload each; prints series per node
# by --labels, bytes per scrape and push, a pprof profile's size,
# Prometheus' and the collector's cost, extrapolated to 1,000 and 10,000
# nodes, and writes them to $(OUTPUT)/fleet-sim/figures.json
# (tests/fleet/fleet_sim.py; docs/deploy.md's fleet section). It measures
# and asserts nothing, so it is in neither make test nor make test-extra.
# Needs root; removes its namespaces, links, cgroups and processes even
# when it fails.
FLEET_SECONDS ?= 75
.PHONY: fleet-sim
fleet-sim:
	$(Q).ci/install-deps fleet
	$(Q)$(MAKE) --no-print-directory $(BIN) $(WORKLOADS) $(OTELCOL)
	$(Q)$(PYTHON) tests/fleet/fleet_sim.py --scprof $(abspath $(BIN)) \
		--workloads $(abspath $(OUTPUT)/workloads) \
		--otelcol $(abspath $(OTELCOL)) --seconds $(FLEET_SECONDS) \
		--out $(abspath $(OUTPUT))/fleet-sim/figures.json

# ---- deploy: contrib/ against the real tools, never part of `make test` --
# promtool on contrib/prometheus, the Grafana dashboard's every query against
# a real Prometheus scraping a real daemon (TLS and basic auth), the
# Kubernetes manifests checked and their command line run with the
# DaemonSet's capabilities (tests/deploy).
# contrib/otel's collector configuration is validated by the collector
# built above (OTELCOL: its Prometheus receiver, remote write, OTLP/HTTP and
# debug exporters).

.PHONY: test-deploy
test-deploy: deps-extra
	$(Q)$(MAKE) --no-print-directory $(BIN) $(BIN)-static $(OTELCOL)
	$(Q)SCPROF=$(abspath $(BIN)) OTELCOL=$(abspath $(OTELCOL)) \
		$(PYTHON) -m pytest -q tests/deploy $(PYTEST_ARGS)

# The heavier suites, after `make test` (.ci/run: make test && make
# test-extra): packaging (test-pkg, below), deployment (test-deploy) and
# arm64 under qemu (test-kernels-arm64).
.PHONY: test-extra
test-extra: test-deploy test-pkg test-kernels-arm64

# ---- other kernels under qemu: make test-kernels, in test-extra -----------
# Debian's stock cloud kernels (5.10, 6.1, 6.12), fetched once into
# $(OUTPUT)/kernels, each booted under qemu (TCG) into an initramfs with
# busybox, the static scprof and static builds of these workloads; a core
# subset of the end-to-end tests runs inside and is checked on the host
# (tests/kernels, less tests/kernels/arm64: make test-kernels-arm64's).
# KERNELS=5.10,6.1 runs some only.
KERNEL_WORKLOADS := groundtruth trigger threads blocked fdkinds stackmix \
	pacer highrate split
KWL := $(OUTPUT)/workloads-static
KERNEL_WORKLOAD_BINS := $(addprefix $(KWL)/,$(KERNEL_WORKLOADS))

$(KWL):
	$(Q)mkdir -p $@

$(KWL)/%: tests/workloads/%.c | $(KWL)
	$(call msg,CC,$@)
	$(Q)$(CC) -static -O2 -g $(WL_EXTRA) -Wall -Wextra -D_GNU_SOURCE $< -o $@ -lpthread
$(KWL)/stackmix: WL_EXTRA := -fomit-frame-pointer

.PHONY: test-kernels
test-extra: test-kernels
test-kernels: deps-extra
	$(Q)$(MAKE) --no-print-directory $(BIN)-static $(KERNEL_WORKLOAD_BINS)
	$(Q)SCPROF_STATIC=$(abspath $(BIN)-static) KERNELS_WORKLOADS=$(abspath $(KWL)) \
		OUTPUT=$(abspath $(OUTPUT)) $(PYTHON) -m pytest -q -p no:cacheprovider \
		--ignore=tests/kernels/arm64 tests/kernels $(PYTEST_ARGS)

# ---- style ----------------------------------------------------------------
LINT_SRCS := $(wildcard bpf/*.c bpf/*.h include/*.h user/*/*.c user/*/*.h \
	tests/unit/*/*.c tests/unit/*/*.h tests/unit/*.h tests/workloads/*.c \
	tests/workloads/m32/*.c tests/fuzz/*.c \
	bench/*.c pkg/*.c)

# Each bpf/*.bpf.h compiles alone, included twice (its guard), in both BPF
# builds: it includes the headers that declare what it uses (settings,
# maps, helpers), so the order they are included in does not matter.
BPF_HEADERS := $(wildcard bpf/*.bpf.h)
BPF_HEADER_CHECKS := $(foreach b,default legacy,$(patsubst bpf/%.bpf.h,$(OUTPUT)/lint/$(b)/%.ok,$(BPF_HEADERS)))
define bpf_header_check
	$(call msg,LINT,$< $(1))
	$(Q)mkdir -p $(@D)
	$(Q)printf '#include "%s"\n#include "%s"\n' $(<F) $(<F) > $(@:.ok=.c)
	$(Q)ulimit -v $(BPF_MEM_LIMIT) && $(CLANG) $(BPF_CFLAGS) $(1) -Ibpf -Werror \
		-fsyntax-only -MT $@ -MF $(@:.ok=.d) $(@:.ok=.c)
	$(Q)touch $@
endef
$(OUTPUT)/lint/default/%.ok: bpf/%.bpf.h
	$(call bpf_header_check,)
$(OUTPUT)/lint/legacy/%.ok: bpf/%.bpf.h
	$(call bpf_header_check,-DSCPROF_LEGACY)

# Every C file as .clang-format (kernel style) has it, user/ keeps its
# layers: includes run down only (tests/lint/layers.py), each BPF header
# compiles alone (above), and the BPF settings are all in struct
# sc_settings, whose size include/sc_settings.h checks as it compiles.
.PHONY: lint layers
lint: $(BPF_HEADER_CHECKS)
	$(call msg,LINT,clang-format)
	$(Q)clang-format --dry-run --Werror $(LINT_SRCS)
	$(call msg,LINT,layers)
	$(Q)$(PYTHON) tests/lint/layers.py
	$(call msg,LINT,BPF settings)
	$(Q)! grep -n 'const volatile' $(filter-out bpf/settings.bpf.h,$(wildcard bpf/*.c bpf/*.h)) || \
		{ echo 'a BPF setting belongs in struct sc_settings (include/sc_settings.h)' >&2; false; }

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
.PHONY: check check-full
# ASan's quarantine holds freed memory back from reuse; a small one keeps
# use-after-free detection without making the memory-flatness tests fail.
# The BPF side runs its legacy build here, as on a kernel without any of the
# facilities of bpf/task.bpf.h (SCPROF_WITHOUT=all: Linux 5.10's ways).
# make check runs the unit tests and the end-to-end files that drive the
# userspace's parsers, outputs and servers most for the least waiting
# (ASAN_E2E, less their churn and busy-machine tests: 540 tests, 5.5
# minutes here beside a build); make check-full (in make test-extra) every
# e2e file, less the churn, busy-machine and soak tests (ASan's slowdown
# is a load of its own: those run against the plain build).
ASAN_E2E := $(addprefix tests/e2e/,test_cli_errors.py test_hostile_names.py \
	test_modes.py test_trace_filter.py test_web_config.py test_count_only.py \
	test_groundtruth.py test_diff.py test_stacks.py test_interval.py \
	test_otlp.py test_features.py test_fd_types.py test_limits.py \
	test_in_flight.py test_attribution.py test_slow.py test_split.py \
	test_daemon.py test_pprof.py test_stacks_by_blocked.py)
ASAN_MAKE = ASAN_OPTIONS=quarantine_size_mb=4 SCPROF_WITHOUT=all \
	$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)/asan \
	BIN=$(OUTPUT)/asan/scprof CFLAGS="$(SAN_CFLAGS)"
check:
	$(Q)$(ASAN_MAKE) -j$(JOBS) test-build
	$(Q)$(ASAN_MAKE) unit
	$(Q)$(ASAN_MAKE) E2E_FILES="$(ASAN_E2E)" \
		PYTEST_ARGS="-k 'not churn and not busy' $(PYTEST_ARGS)" e2e

check-full:
	$(Q)$(ASAN_MAKE) -j$(JOBS) test-build
	$(Q)$(ASAN_MAKE) unit
	$(Q)$(ASAN_MAKE) PYTEST_ARGS="-k 'not churn and not busy' $(PYTEST_ARGS)" e2e
test-extra: check-full

# Each libFuzzer target for FUZZ_SECONDS, from the seeds in tests/fuzz/seeds.
.PHONY: fuzz fuzz-run
fuzz:
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)/fuzz CC=$(CLANG) \
		CFLAGS="$(FUZZ_CFLAGS)" -j$(JOBS) fuzz-build
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)/fuzz CC=$(CLANG) \
		CFLAGS="$(FUZZ_CFLAGS)" fuzz-run

.PHONY: fuzz-build
fuzz-build: $(FUZZERS)

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

# ---- install, man pages, completions, static binary, Debian package ------
# make install PREFIX=/usr DESTDIR=/tmp/root; make uninstall the same way.
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
UNITDIR ?= $(PREFIX)/lib/systemd/system
# The man pages' date: the last commit's, so that a rebuild is the same.
MAN_DATE := $(shell git -C $(CURDIR) log -1 --format=%cs 2>/dev/null || date -u +%F)
MAN_PAGES := $(patsubst docs/man/%.in,$(OUTPUT)/man/%,$(wildcard docs/man/*.8.in))
COMPLETIONS := $(OUTPUT)/completion/scprof $(OUTPUT)/completion/_scprof
GENDOCS = SCPROF=$(abspath $(BIN)) VERSION=$(VERSION) DATE=$(MAN_DATE) \
	$(PYTHON) docs/gendocs.py

# Generated from scprof's own option tables and --help (docs/gendocs.py);
# scprof.8 is the profiler's page, scprof-CMD.8 each subcommand's.
$(OUTPUT)/man/%.8: docs/man/%.8.in docs/gendocs.py $(BIN)
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(GENDOCS) man $(if $(filter scprof,$*),profile,$(patsubst scprof-%,%,$*)) $< > $@

$(OUTPUT)/completion/scprof: docs/gendocs.py $(BIN)
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(GENDOCS) bash > $@

$(OUTPUT)/completion/_scprof: docs/gendocs.py $(BIN)
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(GENDOCS) zsh > $@

.PHONY: docs install uninstall
docs: $(MAN_PAGES) $(COMPLETIONS)

install: $(BIN) docs
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(UNITDIR)
	$(Q)install -m 755 $(BIN) $(DESTDIR)$(SBINDIR)/scprof
	$(Q)install -m 644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man8/
	$(Q)install -m 644 $(OUTPUT)/completion/scprof $(DESTDIR)$(BASHCOMPDIR)/scprof
	$(Q)install -m 644 $(OUTPUT)/completion/_scprof $(DESTDIR)$(ZSHCOMPDIR)/_scprof
	$(Q)sed 's|/usr/local/sbin|$(SBINDIR)|g' \
		contrib/systemd/scprof-daemon.service > $(OUTPUT)/scprof-daemon.service
	$(Q)install -m 644 $(OUTPUT)/scprof-daemon.service $(DESTDIR)$(UNITDIR)/

uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(DESTDIR)$(SBINDIR)/scprof $(DESTDIR)$(BASHCOMPDIR)/scprof \
		$(DESTDIR)$(ZSHCOMPDIR)/_scprof \
		$(DESTDIR)$(UNITDIR)/scprof-daemon.service \
		$(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(MAN_PAGES)))

# One statically linked binary to copy onto a host with nothing installed.
# GnuTLS cannot be linked statically from Debian's packages (p11-kit ships
# no static library): pkg/no_gnutls.c stands in for it, so this binary
# serves plain HTTP only (see docs/deploy.md). Neither can libcurl (it
# needs GnuTLS, Kerberos, LDAP...): pkg/no_curl.c stands in for it, so
# this binary has no OTLP push (daemon --otlp-endpoint says so).
# libtinfo is ncurses' own dependency; liblzma and libbz2 are libdw's
# (unused until something links libdw).
STATIC_LDLIBS = $(filter-out -lgnutls -lcurl,$(LDLIBS)) -ltinfo -llzma -lbz2 -lz
$(OUTPUT)/pkg/no_gnutls.o $(OUTPUT)/pkg/no_curl.o: $(OUTPUT)/pkg/%.o: pkg/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -c $< -o $@

STATIC_BIN ?= $(BIN)-static
$(STATIC_BIN): $(USER_OBJS) $(OUTPUT)/pkg/no_gnutls.o $(OUTPUT)/pkg/no_curl.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(USER_CFLAGS) -static $^ $(STATIC_LDLIBS) -o $@ 2> $(OUTPUT)/static-link.log || \
		{ cat $(OUTPUT)/static-link.log; exit 1; }

.PHONY: static
static: $(STATIC_BIN)

# The same for arm64, cross-built here with Debian's aarch64 toolchain and
# the :arm64 libraries (.ci/install-deps extra adds both), its objects in
# $(OUTPUT)/arm64: ./scprof-static-arm64.
.PHONY: static-arm64
static-arm64:
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 CROSS=aarch64-linux-gnu- \
		OUTPUT=$(OUTPUT)/arm64 BIN=$(OUTPUT)/arm64/scprof \
		STATIC_BIN=scprof-static-arm64 scprof-static-arm64

# make deb: a Debian package of the dynamic build (pkg/debian/, pkg/mkdeb.sh).
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB := $(OUTPUT)/deb/scprof_$(VERSION)-1_$(DEB_ARCH).deb
.PHONY: deb
deb: $(BIN) docs
	$(call msg,DEB,$(DEB))
	$(Q)rm -rf $(OUTPUT)/deb/root
	$(Q)$(MAKE) --no-print-directory install DESTDIR=$(abspath $(OUTPUT))/deb/root \
		PREFIX=/usr UNITDIR=/lib/systemd/system \
		ZSHCOMPDIR=/usr/share/zsh/vendor-completions
	$(Q)sh pkg/mkdeb.sh $(OUTPUT)/deb $(VERSION) $(DEB_ARCH) $(DEB)

# The quick packaging tests (make test): man pages and --help against the
# option tables, groff, completions, make install into a DESTDIR. The heavy
# ones (make test-extra): the static binary in an empty root, make deb,
# lintian, dpkg -i.
PKG_TEST_ENV = SCPROF=$(abspath $(BIN)) OUTPUT=$(abspath $(OUTPUT)) \
	MAKE="$(MAKE)"
.PHONY: test-pkg-quick test-pkg
test-pkg-quick: $(BIN) docs
	$(Q)$(PKG_TEST_ENV) $(PYTHON) -m pytest -q -m 'not heavy' tests/pkg $(PYTEST_ARGS)

test-pkg: deps-extra
	$(Q)$(MAKE) --no-print-directory $(BIN) docs static deb
	$(Q)$(PKG_TEST_ENV) $(PYTHON) -m pytest -q tests/pkg $(PYTEST_ARGS)


# vmlinux/arm64/vmlinux.h: from the BTF of Debian 13's arm64 cloud kernel,
# cut out of its image (vmlinux/README.md).
# ---- arm64 kernels under qemu (tests/kernels/arm64) ------------------
# make test-kernels-arm64: ./scprof-static-arm64 and static arm64 workloads
# in an initramfs, booted with Debian 12's and 13's arm64 cloud kernels
# (6.1, 6.12) under qemu-system-aarch64 (TCG); the cases in
# tests/kernels/arm64/cases run inside, their reports are checked outside.
# Downloads are kept in $(OUTPUT)/kernels.
ARM64_CC := aarch64-linux-gnu-gcc
ARM64_WL := $(OUTPUT)/arm64/workloads
ARM64_WORKLOADS := $(addprefix $(ARM64_WL)/,groundtruth gocalls blocked \
	highrate stackmix split)

$(ARM64_WL)/%: tests/workloads/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(ARM64_CC) -static -O2 -g $(WL_EXTRA) -Wall -Wextra -D_GNU_SOURCE $< -o $@ -lpthread
$(ARM64_WL)/stackmix: WL_EXTRA := -fomit-frame-pointer

# A 32-bit arm program for the compat ABI, written without an arm toolchain.
ARM64_WORKLOADS += $(ARM64_WL)/getpid32
$(ARM64_WL)/getpid32: tests/kernels/arm64/mkarm32.py
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(PYTHON) $< $@ 1000
	$(Q)chmod 755 $@

# (-rs: a skip's reason in the log; test_daemon's carries the kernel's
# figures)
.PHONY: test-kernels-arm64
test-kernels-arm64: deps-extra
	$(Q)$(MAKE) --no-print-directory static-arm64 $(ARM64_WORKLOADS)
	$(Q)for s in bookworm trixie; do \
		sh tests/kernels/arm64/fetch.sh $(OUTPUT)/kernels/arm64 $$s || exit 1; done
	$(Q)KERNELS=$(abspath $(OUTPUT)/kernels/arm64) \
		SCPROF=$(abspath scprof-static-arm64) \
		WORKLOADS=$(abspath $(ARM64_WL)) \
		$(PYTHON) -m pytest -q -rs tests/kernels/arm64 $(PYTEST_ARGS)

.PHONY: vmlinux-arm64
vmlinux-arm64:
	$(Q)sh tests/kernels/arm64/fetch.sh $(OUTPUT)/kernels/arm64 trixie
	$(call msg,GEN,vmlinux/arm64/vmlinux.h)
	$(Q)$(PYTHON) vmlinux/btf_from_image.py $(OUTPUT)/kernels/arm64/trixie/Image \
		$(OUTPUT)/kernels/arm64/trixie/btf
	$(Q)$(BPFTOOL) btf dump file $(OUTPUT)/kernels/arm64/trixie/btf format c \
		> vmlinux/arm64/vmlinux.h.tmp
	$(Q)mv vmlinux/arm64/vmlinux.h.tmp vmlinux/arm64/vmlinux.h

.PHONY: vmlinux
vmlinux:
	$(call msg,GEN,vmlinux/$(ARCH)/vmlinux.h)
	$(Q)mkdir -p vmlinux/$(ARCH)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h.tmp
	$(Q)mv vmlinux/$(ARCH)/vmlinux.h.tmp vmlinux/$(ARCH)/vmlinux.h

.PHONY: clean
clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT) $(BIN) $(STATIC_BIN) scprof-static-arm64

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/user/*/*.d $(OUTPUT)/tests/*/*.d \
	$(OUTPUT)/bench/*.d $(OUTPUT)/lint/*/*.d)

.SECONDARY:
