# topotune - top-level build.
#
#   make                 build the library (static + shared) and the tools into $(BUILD)/
#   make run             the main job: scan (or bundled example), matrix, tuning table, executor sweep
#   make check           build and run every test (GPU tests skip cleanly without a GPU)
#   make install PREFIX=/usr/local   tools (and the nccl-tests names all_reduce_perf, ...), man pages,
#                        library, headers, pkg-config file (docs/install.md: rpath, static linking)
#   make deps            install missing build dependencies (Debian/Ubuntu, as root)
#
# Variables: BUILD (build folder, default build), PREFIX, CC, NVCC (empty = no CUDA),
#            CUDA_ARCH (default sm_90), SANITIZE=1 (ASan+UBSan), MPI=0 (topo-exec without MPI).

BUILD     ?= build
.DEFAULT_GOAL := all
PREFIX    ?= /usr/local
CC        ?= cc
NVCC      ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
CUDA_ARCH ?= sm_90
PKG_CONFIG ?= pkg-config

MODULES   := common xml topo tune exec
PKGS      := libxml-2.0 libcjson hwloc
DEPS_STAMP := $(BUILD)/.deps-ok

# Dependencies are checked (and installed when missing) before anything reads pkg-config.
ifeq ($(filter deps clean distclean help,$(MAKECMDGOALS)),)
  _deps := $(shell test $(DEPS_STAMP) -nt scripts/install-deps.sh || { scripts/install-deps.sh >&2 && mkdir -p $(BUILD) && touch $(DEPS_STAMP); })
endif

PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
# verbs headers present -> TT_HAVE_IBVERBS (the scan probe and the ib transport); the library itself is
# dlopen'ed at run time, never linked, so the tools start where rdma-core is absent
HAVE_IBV   := $(shell printf '\043include <infiniband/verbs.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
HAVE_CMOCKA := $(shell $(PKG_CONFIG) --exists cmocka 2>/dev/null && echo 1)

WARN      := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes -Wformat=2
CFLAGS    ?= -O2 -g
CFLAGS    += -std=gnu11 -fPIC -pthread $(WARN) $(PKG_CFLAGS) -D_GNU_SOURCE
# Layering, enforced: a module sees only the headers of the modules below it
# (common <- xml <- topo <- tune; common <- exec), so a wrong-way #include fails to compile.
# bin/, plugin/ and the tests see every module.
INC_common := -Icommon
INC_xml    := -Icommon -Ixml
INC_topo   := -Icommon -Ixml -Itopo
INC_tune   := -Icommon -Ixml -Itopo -Itune
INC_exec   := -Icommon -Iexec
INC_all    := $(addprefix -I,$(MODULES))
LDLIBS    += $(PKG_LIBS) -ldl -lpthread -lm
ifeq ($(HAVE_IBV),1)
  CFLAGS  += -DTT_HAVE_IBVERBS=1
endif
ifeq ($(SANITIZE),1)
  CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer
  LDFLAGS += -fsanitize=address,undefined
endif
ifneq ($(NVCC),)
  CFLAGS  += -DTT_HAVE_CUDA=1
endif

LIB_SRCS  := $(strip $(foreach m,$(MODULES),$(wildcard $(m)/*.c)))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
CU_SRCS   := $(strip $(if $(NVCC),$(foreach m,$(MODULES),$(wildcard $(m)/*.cu))))
CU_OBJS   := $(CU_SRCS:%.cu=$(BUILD)/obj/%.cu.o)
ifneq ($(NVCC),)
  CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
  ifneq ($(CU_SRCS),)
    # static runtime: tools run where libcudart.so is not on the loader path
    # -lstdc++: the host side of .cu files is C++ (guards of kernel stubs, new)
    LDLIBS  += -L$(CUDA_HOME)/lib64 -lcudart_static -lrt -lstdc++
  endif
endif

STATIC_LIB := $(BUILD)/lib/libtopotune.a
SHARED_LIB := $(BUILD)/lib/libtopotune.so

CLI_SRCS  := $(wildcard bin/cli_*.c)
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
TOOL_SRCS := $(wildcard bin/topo-*.c)
TOOLS     := $(TOOL_SRCS:bin/%.c=$(BUILD)/bin/%)

# the nccl-tests drop-in (bin/cli_perf.c): topo-exec under nccl-tests' program names
PERF_NAMES := all_reduce_perf all_gather_perf reduce_scatter_perf broadcast_perf reduce_perf
PERF_LINKS := $(addprefix $(BUILD)/bin/,$(PERF_NAMES))
# man pages generated from docs/cli-*.md (scripts/dev/md2man.py; skipped without python3)
MAN_PAGES := $(patsubst docs/cli-%.md,$(BUILD)/man/man1/%.1,$(wildcard docs/cli-*.md))
HAVE_PY3  := $(shell command -v python3 >/dev/null 2>&1 && echo 1)

TEST_SRCS := $(wildcard tests/unit/test_*.c)
TESTS     := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
TEST_SUPPORT_SRCS := $(wildcard tests/unit/support_*.c)
TEST_SUPPORT_OBJS := $(TEST_SUPPORT_SRCS:%.c=$(BUILD)/obj/%.o)

PUBLIC_HEADERS := $(wildcard $(addsuffix /tt_*.h,$(MODULES)))

run: all
	@BUILD=$(BUILD) scripts/run-main.sh

.PHONY: run all lib tools tests check install uninstall clean distclean deps help cuda-status
# Quiet build: one short line per step ("  CC  exec/exec_xfer.c"); `make V=1` prints the whole commands.
ifeq ($(V),1)
  Q :=
  say = @:
else
  Q := @
  say = @printf '  %-6s %s\n'
endif

all: cuda-status lib tools tuner-plugin

cuda-status:
	@if [ -z "$(NVCC)" ]; then echo "topotune: nvcc not found - building without CUDA (GPU executor skipped)"; \
	 else echo "topotune: CUDA enabled with $(NVCC) ($(CUDA_ARCH))"; fi

lib: $(STATIC_LIB) $(SHARED_LIB)
tools: $(TOOLS) $(PERF_LINKS) $(if $(HAVE_PY3),man)

$(PERF_LINKS): | $(BUILD)/bin/topo-exec
	$(Q)ln -sf topo-exec $@

.PHONY: man
man: $(MAN_PAGES)
$(BUILD)/man/man1/%.1: docs/cli-%.md scripts/dev/md2man.py common/tt_common.h
	@mkdir -p $(dir $@)
	$(say) MAN $@
	$(Q)python3 scripts/dev/md2man.py --name $* --version $(shell sed -n 's/.*TT_VERSION_STRING "\(.*\)"/\1/p' common/tt_common.h) $< > $@.tmp && mv $@.tmp $@

# the module of an object is the first folder of its source path; bin/ and tests see all
mod_inc = $(or $(INC_$(firstword $(subst /, ,$(1)))),$(INC_all))

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(say) CC $<
	$(Q)$(CC) $(CFLAGS) $(call mod_inc,$<) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	$(say) NVCC $<
	$(Q)$(NVCC) -O3 -arch=$(CUDA_ARCH) -Xcompiler -fPIC -std=c++17 $(call mod_inc,$<) -DTT_HAVE_CUDA=1 -MMD -MP -MF $(@:.o=.d) -c $< -o $@

$(STATIC_LIB): $(LIB_OBJS) $(CU_OBJS)
	@mkdir -p $(dir $@)
	$(say) AR $@
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

# libtopotune.so exports exactly the functions declared in the public headers (tt_*.h):
# the export map is made from them, so an internal helper can never become ABI by accident.
EXPORT_MAP := $(BUILD)/libtopotune.map
$(EXPORT_MAP): $(PUBLIC_HEADERS) scripts/dev/export-map.sh
	@mkdir -p $(dir $@)
	$(say) GEN $@
	$(Q)scripts/dev/export-map.sh $(PUBLIC_HEADERS) > $@

$(SHARED_LIB): $(LIB_OBJS) $(CU_OBJS) $(EXPORT_MAP)
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) -shared -Wl,-soname,libtopotune.so.0 -Wl,--version-script=$(EXPORT_MAP) $(LDFLAGS) -o $@ $(LIB_OBJS) $(CU_OBJS) $(LDLIBS)

$(BUILD)/bin/%: bin/%.c $(CLI_OBJS) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) $(CFLAGS) $(INC_all) -Ibin $(LDFLAGS) -o $@ $< $(CLI_OBJS) $(TOOL_OBJS) $(STATIC_LIB) $(LDLIBS)

# topo-exec's MPI launch mode (bin/topo_exec_mpi.c): linked into topo-exec only
EXEC_MPI_OBJ := $(BUILD)/obj/bin/topo_exec_mpi.o
$(BUILD)/bin/topo-exec: private TOOL_OBJS := $(EXEC_MPI_OBJ)
$(BUILD)/bin/topo-exec: $(EXEC_MPI_OBJ)
$(EXEC_MPI_OBJ): $(BUILD)/.mpi-setting

# MPI (like nccl-tests' MPI=1): only topo-exec links libmpi, so that mpirun launches it; the
# library, the tuner plugin and the other tools stay MPI-free (exec/tt_exec_mpi.h is header-only).
# Found through pkg-config ompi-c or Open MPI's mpicc; `make MPI=0` builds without it.
ifeq ($(origin MPI),undefined)
  MPI := $(shell { $(PKG_CONFIG) --exists ompi-c 2>/dev/null || command -v mpicc >/dev/null 2>&1; } && echo 1)
endif
ifeq ($(MPI),1)
  MPI_CFLAGS := $(shell $(PKG_CONFIG) --cflags ompi-c 2>/dev/null || mpicc --showme:compile)
  MPI_LIBS   := $(shell $(PKG_CONFIG) --libs ompi-c 2>/dev/null || mpicc --showme:link)
  # private: not inherited by the prerequisites (library objects, CLI helpers)
  $(EXEC_MPI_OBJ): private CFLAGS += -DTT_HAVE_MPI=1 $(MPI_CFLAGS)
  $(BUILD)/bin/topo-exec: private LDLIBS += $(MPI_LIBS)
endif
# rebuild the MPI mode and relink topo-exec when MPI is switched on or off (the file changes only then)
$(BUILD)/bin/topo-exec: $(BUILD)/.mpi-setting
$(BUILD)/.mpi-setting: mpi-setting-check
	@:
.PHONY: mpi-setting-check
mpi-setting-check:
	@mkdir -p $(BUILD) && { echo "MPI=$(MPI)" | cmp -s - $(BUILD)/.mpi-setting || echo "MPI=$(MPI)" >$(BUILD)/.mpi-setting; }

# NCCL tuner plugin (plugin/*.c): a .so that needs nothing but libc at run time (NCCL dlopens it
# on machines without libcjson/libxml2/hwloc), so it links only the common module (no cJSON, no
# libxml2): libtopotune-common.a.  plugin/tuner.map exports the ncclTunerPlugin_v* symbols only;
# --no-undefined makes a missing symbol a link error, not a dlopen failure on the GPU machine.
# tests/plugin/tuner_harness.c dlopens it through our own declarations (tests/cli/test_tuner_plugin.sh).
INC_plugin   := -Icommon -Iplugin
COMMON_LIB   := $(BUILD)/lib/libtopotune-common.a
COMMON_OBJS  := $(filter $(BUILD)/obj/common/%,$(LIB_OBJS))
PLUGIN_SRCS  := $(wildcard plugin/*.c)
PLUGIN_OBJS  := $(PLUGIN_SRCS:%.c=$(BUILD)/obj/%.o)
TUNER_PLUGIN := $(BUILD)/lib/libnccl-tuner-topotune.so
TUNER_HARNESS := $(BUILD)/tests/plugin/tuner_harness
.PHONY: tuner-plugin
tuner-plugin: $(TUNER_PLUGIN)
$(COMMON_LIB): $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(say) AR $@
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^
$(TUNER_PLUGIN): $(PLUGIN_OBJS) $(COMMON_LIB) plugin/tuner.map
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) $(CFLAGS) -shared -Wl,--version-script=plugin/tuner.map -Wl,--no-undefined -Wl,--exclude-libs,ALL -Wl,--as-needed \
	    $(LDFLAGS) -o $@ $(PLUGIN_OBJS) $(COMMON_LIB) -lm
$(TUNER_HARNESS): tests/plugin/tuner_harness.c
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -ldl
$(BUILD)/tests/test_tune_plugin $(BUILD)/tests/test_tuner_hardening: $(TUNER_PLUGIN)

tests: $(TESTS) $(TUNER_HARNESS)

$(BUILD)/tests/%: tests/unit/%.c $(TEST_SUPPORT_OBJS) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) $(CFLAGS) $(INC_all) -Itests/unit $(LDFLAGS) -o $@ $< $(TEST_SUPPORT_OBJS) $(STATIC_LIB) $(LDLIBS) -lcmocka

check: all tests
	@BUILD=$(BUILD) tests/run-tests.sh

# $(PREFIX)/lib for the loader: system (searched by itself), ldconfig (in /etc/ld.so.conf: install refreshes
# the cache) or other (topotune.pc's Libs carry -Wl,-rpath,${libdir}); the tools link libtopotune.a, so
# they need neither (docs/install.md)
comma := ,
LIBDIR_KIND = $(shell scripts/libdir-kind.sh $(PREFIX)/lib)
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/topotune
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	for n in $(PERF_NAMES); do ln -sf topo-exec $(DESTDIR)$(PREFIX)/bin/$$n; done
	if [ -n "$(HAVE_PY3)" ]; then install -d $(DESTDIR)$(PREFIX)/share/man/man1 && \
	  install -m 644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man1/ && \
	  for n in $(PERF_NAMES); do ln -sf topo-exec.1 $(DESTDIR)$(PREFIX)/share/man/man1/$$n.1; done; fi
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(PREFIX)/lib/libtopotune.so.0
	install -m 755 $(TUNER_PLUGIN) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libtopotune.so.0 $(DESTDIR)$(PREFIX)/lib/libtopotune.so
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(PREFIX)/include/topotune/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(shell sed -n 's/.*TT_VERSION_STRING "\(.*\)"/\1/p' common/tt_common.h)|' \
	    -e 's|@REQUIRES@|$(PKGS)|' -e 's|@RPATH@|$(if $(filter other,$(LIBDIR_KIND)),-Wl$(comma)-rpath$(comma)$${libdir})|' \
	    scripts/topotune.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/topotune.pc
	@if [ -z "$(DESTDIR)" ] && [ "$(LIBDIR_KIND)" = ldconfig ]; then \
	  if [ "$$(id -u)" = 0 ]; then ldconfig; else \
	  echo "topotune: run ldconfig as root so that programs find libtopotune.so.0 in $(PREFIX)/lib"; fi; fi

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/bin/,$(notdir $(TOOLS)) $(PERF_NAMES))
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/share/man/man1/,$(notdir $(MAN_PAGES)) $(addsuffix .1,$(PERF_NAMES)))
	rm -f $(DESTDIR)$(PREFIX)/lib/libtopotune.a $(DESTDIR)$(PREFIX)/lib/libtopotune.so $(DESTDIR)$(PREFIX)/lib/libtopotune.so.0
	rm -f $(DESTDIR)$(PREFIX)/lib/libnccl-tuner-topotune.so
	rm -rf $(DESTDIR)$(PREFIX)/include/topotune $(DESTDIR)$(PREFIX)/lib/pkgconfig/topotune.pc

deps:
	scripts/install-deps.sh
	@mkdir -p $(BUILD) && touch $(DEPS_STAMP)

clean:
	rm -rf $(BUILD)

distclean: clean

help:
	@sed -n '1,12p' Makefile

# keep object files of tools and tests between runs (no relinking on every make)
.SECONDARY:

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(EXEC_MPI_OBJ:.o=.d) $(PLUGIN_OBJS:.o=.d) $(TEST_SUPPORT_OBJS:.o=.d) $(CU_OBJS:.o=.d)

# ---- hardening: fuzzing, sanitizers, valgrind (docs/reliability.md) ----
#   make fuzz [FUZZ_SECONDS=60]   libFuzzer targets in tests/fuzz (clang, ASan+UBSan, build-fuzz/),
#                                 then random CLI argument vectors; fails on any crash
#   make check-asan               the whole suite built with ASan+UBSan in build-asan/, errors fatal
#   make check-valgrind           unit test programs under valgrind (memcheck, leaks) from $(BUILD)
FUZZ_SECONDS ?= 60
ASAN_BUILD   ?= build-asan
.PHONY: fuzz check-asan check-valgrind
# the replay test compiles the fuzz targets in (#include): rebuild it when they change; it links the
# tuner plugin's table reader too (fuzz_plugin_table.c), which is not in the library
FUZZ_PLUGIN_OBJS := $(BUILD)/obj/plugin/tuner_table.o $(BUILD)/obj/plugin/tuner_json.o
$(BUILD)/tests/test_fuzz_replay: tests/unit/test_fuzz_replay.c $(wildcard tests/fuzz/*.c tests/fuzz/*.h) \
                                 $(TEST_SUPPORT_OBJS) $(STATIC_LIB) $(FUZZ_PLUGIN_OBJS)
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) $(CFLAGS) $(INC_all) -Iplugin -Itests/unit $(LDFLAGS) -o $@ $< $(TEST_SUPPORT_OBJS) $(FUZZ_PLUGIN_OBJS) \
	    $(STATIC_LIB) $(LDLIBS) -lcmocka
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/dev/fuzz.sh
# HWLOC_COMPONENTS=-pci: hwloc's libpciaccess plugin leaves libpciaccess's global state unreachable
# once hwloc unloads the plugin (not ours; LSan cannot name it); hwloc's own Linux sysfs PCI discovery
# is used instead.  See docs/reliability.md.
check-asan:
	HWLOC_COMPONENTS=-pci ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=1:verify_asan_link_order=0 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/fuzz/lsan.supp \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	CFLAGS="-O2 -g -fno-sanitize-recover=undefined" $(MAKE) check BUILD=$(ASAN_BUILD) SANITIZE=1 NVCC=
check-valgrind: all tests
	BUILD=$(BUILD) scripts/dev/valgrind-tests.sh
