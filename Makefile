# SPDX-License-Identifier: GPL-2.0
#
# perf with AUX-area sampling, virtual LBR and persistent events: an overlay
# of our files plus patches/series on the Linux 6.12 perf sources.
#
#   make                 assemble build/linux, overlay, patch, build build/perf/perf
#   make check           build, then run all our tests (one closing summary line)
#   make check-long      the suites too long for make check (tests/perf-suites-long)
#   make check SANITIZE=address,undefined
#                        the same, perf and libauxsample built with those
#                        sanitizers in build/sanitize-address-undefined/
#   make fuzz            build the libFuzzer harnesses (fuzz/, clang) and run
#                        each for FUZZ_TIME seconds (default 600); make check
#                        runs each for FUZZ_CHECK_TIME (default 20)
#   make libauxsample    build the decoding library and its unit tests
#   make check-decoders  the one-decoder builds: perf without libopencsd
#                        (DECODERS=pt, build/decoders-pt/) decoding Intel PT,
#                        perf without libipt (DECODERS=etm) decoding ETM
#   make patches         export commits made in build/linux to patches/
#   make series          write the upstream-ready series to build/series/patches
#   make series-check    check that each prefix of it builds and passes checkpatch
#   make install         install perf and its man pages under $(PREFIX)
#   make clean           remove the perf build outputs (keep build/linux)
#   make distclean       remove build/ altogether
#
# KSRC=<tree or tarball> picks other Linux sources, PREFIX=<dir> the install
# prefix, V=1 shows the commands, PERF_MAKE_FLAGS=... adds perf build flags,
# CC=... picks the compiler (ccache, when installed, goes in front of it).

KSRC		?= /usr/src/linux-source-6.12.tar.xz
PREFIX		?= /usr/local
BUILD		:= $(CURDIR)/build
TREE		:= $(BUILD)/linux
comma		:= ,

# A sanitized build shares build/linux but builds perf and libauxsample in
# a directory of its own, so that the normal build is left as it is; the
# file 'sanitize' there tells scripts/run-tests which runtime options to
# set.  REFCNT_CHECKING comes with -fsanitize=address (rc_check.h).
#
# UBSan's alignment check stays off: perf reads records in place where a
# perf.data puts them, at any offset a corrupt file gives, as x86 and
# arm64 allow; that is no bug there, and it would hide every other report
# on mutated files.
ifdef SANITIZE
OUT		:= $(BUILD)/sanitize-$(subst $(comma),-,$(SANITIZE))
SAN_CFLAGS	:= -fsanitize=$(SANITIZE) -fno-omit-frame-pointer \
		   $(if $(findstring undefined,$(SANITIZE)),-fno-sanitize=alignment)
else ifdef DECODERS
OUT		:= $(BUILD)/decoders-$(DECODERS)
SAN_CFLAGS	:=
else
OUT		:= $(BUILD)
SAN_CFLAGS	:=
endif
PERF_OUT	:= $(OUT)/perf
PERF		:= $(PERF_OUT)/perf

# Python scripting (perf script -s, as distributions build perf) uses the
# distribution's python3 and python3-config (python3-dev), not whichever
# python3 comes first on PATH (pyenv's and the like, whose libpython a
# perf binary may not find later); without python3-config it stays off,
# as perf version --build-options then says.  Perl scripting stays off:
# nothing here uses it.  PYTHON_WORD names the interpreter that runs the
# attr tests (tests/attr.py).  BPF skeletons need clang and bpftool.
# CoreSight (libopencsd) is wanted for ETM decoding.
PYTHON_CONFIG_SYS := $(wildcard /usr/bin/python3-config)
PERF_PYTHON	:= $(if $(PYTHON_CONFIG_SYS),PYTHON=/usr/bin/python3 \
		   PYTHON_CONFIG=/usr/bin/python3-config,NO_LIBPYTHON=1)
#
# DECODERS=pt builds perf as upstream does, without CORESIGHT=1: Intel PT
# decoding only; DECODERS=etm leaves libipt out: CoreSight ETM only.
ifeq ($(DECODERS),pt)
CORESIGHT_CONFIG :=
LIB_CONFIG	:= NO_OPENCSD=1
else ifeq ($(DECODERS),etm)
CORESIGHT_CONFIG := CORESIGHT=1 NO_LIBIPT=1
LIB_CONFIG	:= NO_LIBIPT=1
else ifeq ($(DECODERS),)
CORESIGHT_CONFIG := CORESIGHT=1
LIB_CONFIG	:=
else
$(error DECODERS=$(DECODERS): pt or etm)
endif
PERF_CONFIG	:= $(PERF_PYTHON) NO_LIBPERL=1 BUILD_BPF_SKEL=0 \
		   PYTHON_WORD=python3 $(CORESIGHT_CONFIG) $(PERF_MAKE_FLAGS)
PERF_FLAGS	:= O=$(PERF_OUT) $(PERF_CONFIG) prefix=$(PREFIX)
# A CC given on the command line (or in the environment) is the compiler;
# make's own default 'cc' becomes gcc, as before.
ifeq ($(origin CC),default)
CC		:= gcc
endif
CCACHE		:= $(if $(shell command -v ccache 2>/dev/null),ccache )
PERF_FLAGS	+= CC="$(CCACHE)$(CC)" HOSTCC="$(CCACHE)gcc"
# perf links with $(CC) $(CFLAGS), so -fsanitize in EXTRA_CFLAGS reaches
# the link; perf adds EXTRA_LDFLAGS to ld -r steps, where it must not go.
ifneq ($(SAN_CFLAGS)$(EXTRA_CFLAGS),)
PERF_FLAGS	+= EXTRA_CFLAGS="$(SAN_CFLAGS) $(EXTRA_CFLAGS)"
endif
# GCC warns wrongly under -fsanitize=undefined (-Wformat-truncation in
# util/build-id.c, ...): the normal build keeps -Werror, this one cannot.
ifdef SANITIZE
PERF_FLAGS	+= WERROR=0
endif
ifdef V
PERF_FLAGS	+= V=1
endif

PATCHES		:= $(wildcard patches/*.patch)
JOBS		?= $(shell nproc 2>/dev/null || echo 2)

all: perf

# Re-assemble when the series, a patch or the chosen sources change.
$(BUILD)/ksrc: FORCE
	@mkdir -p $(BUILD)
	@echo '$(KSRC)' | cmp -s - $@ || echo '$(KSRC)' > $@

$(BUILD)/assembled: $(BUILD)/ksrc patches/series $(PATCHES)
	@scripts/assemble '$(KSRC)' $(BUILD)
	@touch $@

assemble: $(BUILD)/assembled

# perf's build recompiles what a changed flag touches, but not the objects
# it builds by rules of their own (util/intel-pt-decoder's, whose stale
# non-PIC copy then breaks the link of the Python module): a change of
# configuration starts the perf build afresh, as it recompiles it all anyway.
perf: $(BUILD)/assembled
	@scripts/overlay $(BUILD)
	@echo '$(PERF_CONFIG)' | cmp -s - $(PERF_OUT)/.perf-config 2>/dev/null || \
		{ rm -rf $(PERF_OUT); mkdir -p $(PERF_OUT); echo '$(PERF_CONFIG)' > $(PERF_OUT)/.perf-config; }
	@mkdir -p $(PERF_OUT)
ifdef SANITIZE
	@echo '$(SANITIZE)' | cmp -s - $(OUT)/sanitize || echo '$(SANITIZE)' > $(OUT)/sanitize
endif
ifneq ($(OUT),$(BUILD))
	@ln -sfn ../linux $(OUT)/linux
endif
	@$(MAKE) --no-print-directory -j$(JOBS) -C $(TREE)/tools/perf $(PERF_FLAGS)
	@$(MAKE) --no-print-directory vgtool

# perf auxsample simulate's fast engine: a Valgrind tool, built where
# Valgrind's tool interface is installed (Debian's valgrind package: its
# pkg-config file, pub_tool_*.h and the static libcoregrind/libvex), as
# perf's feature checks find a library; without it, simulate has only its
# ptrace engine.  The tool goes to $(PERF_OUT)/auxsample-vg, beside
# perf, with links to the Valgrind files its core loads from VALGRIND_LIB.
VG_PC_OK	:= $(shell pkg-config --exists valgrind 2>/dev/null && echo y)
ifeq ($(VG_PC_OK),y)
VG_INC		:= $(shell pkg-config --variable=includedir valgrind)
VG_LIBDIR	:= $(shell pkg-config --variable=libdir valgrind)/valgrind
VG_LOAD		:= $(shell pkg-config --variable=valt_load_address valgrind)
VG_PKGLIB	:= $(firstword $(wildcard /usr/libexec/valgrind /usr/lib/valgrind \
		   /usr/lib/x86_64-linux-gnu/valgrind))
HAVE_VG		:= $(and $(wildcard $(VG_INC)/pub_tool_tooliface.h),\
		   $(wildcard $(VG_LIBDIR)/libcoregrind-amd64-linux.a),\
		   $(wildcard $(VG_PKGLIB)/vgpreload_core-amd64-linux.so))
endif
VG_DIR		:= $(PERF_OUT)/auxsample-vg
VG_TOOL		:= $(VG_DIR)/auxsample-amd64-linux
VG_SRC		:= tools/perf/auxsample-vg/auxsample-vg.c tools/perf/auxsample-vg/auxsample-vg-proto.h
VG_CFLAGS	:= -O2 -g -m64 -fno-pie -fno-stack-protector -fno-builtin \
		   -fno-strict-aliasing -Wall -Werror -Wno-unused-parameter \
		   -DVGA_amd64=1 -DVGO_linux=1 -DVGP_amd64_linux=1 \
		   -DVGPV_amd64_linux_vanilla=1 -I$(VG_INC)
VG_LDFLAGS	:= -m64 -static -nodefaultlibs -nostartfiles -u _start -no-pie \
		   -Wl,--build-id=none -Wl,-Ttext-segment=$(VG_LOAD)

ifneq ($(HAVE_VG),)
vgtool: $(VG_TOOL)
$(VG_TOOL): $(VG_SRC) Makefile
	@mkdir -p $(VG_DIR)
	@echo '  CC+LD   $@'
	@$(CC) $(VG_CFLAGS) -c -o $(VG_DIR)/auxsample-vg.o $<
	@$(CC) $(VG_LDFLAGS) -o $@ $(VG_DIR)/auxsample-vg.o \
		$(VG_LIBDIR)/libcoregrind-amd64-linux.a $(VG_LIBDIR)/libvex-amd64-linux.a \
		$(wildcard $(VG_LIBDIR)/libgcc-sup-amd64-linux.a) -lgcc
	@for f in vgpreload_core-amd64-linux.so default.supp; do \
		ln -sfn $(VG_PKGLIB)/$$f $(VG_DIR)/$$f; done
else
vgtool:
	@echo '  SKIP    auxsample Valgrind tool: no Valgrind tool interface (pkg-config valgrind); simulate uses ptrace'
	@rm -rf $(VG_DIR)
endif

# Built in the assembled tree, as perf builds it: tools/build does the work.
libauxsample: $(BUILD)/assembled
	@scripts/overlay $(BUILD)
	@mkdir -p $(OUT)/auxsample
	@$(MAKE) --no-print-directory -s -C $(TREE)/tools/lib/auxsample O=$(OUT)/auxsample \
		CC="$(CCACHE)$(CC)" EXTRA_CFLAGS="$(SAN_CFLAGS) $(EXTRA_CFLAGS)" \
		EXTRA_LDFLAGS="$(SAN_CFLAGS) $(EXTRA_LDFLAGS)" $(LIB_CONFIG) tests

# The fuzz harnesses (fuzz/): the perf ones link this build's objects.
# 'make fuzz' runs each for FUZZ_TIME seconds (FUZZ_HARNESS=pt,etm picks);
# 'make check' for FUZZ_CHECK_TIME.  Corpora, crashes and logs stay in
# $(OUT)/fuzz (see README, FUZZING).
FUZZ_OUT	:= $(OUT)/fuzz
FUZZ_TIME	?= 600
FUZZ_CHECK_TIME	?= 20
FUZZ_HARNESS	?=

fuzz-build: perf
	@mkdir -p $(FUZZ_OUT)
	@$(MAKE) --no-print-directory -C fuzz O=$(FUZZ_OUT) PERF_OUT=$(PERF_OUT) \
		LIBDIR=$(TREE)/tools/lib/auxsample \
		PERF_SRC=$(TREE)/tools/perf PERF_LINK_FLAGS='$(PERF_CONFIG)'

fuzz: fuzz-build
	@scripts/fuzz run $(OUT) $(FUZZ_TIME) $(subst $(comma), ,$(FUZZ_HARNESS))

check: perf libauxsample fuzz-build
	@FUZZ_CHECK_TIME=$(FUZZ_CHECK_TIME) scripts/run-tests $(OUT)

# perf without libopencsd, as upstream builds it, must decode Intel PT (the
# library's tests and perf's test on a real recording), and refuse ETM
# trace naming libopencsd; the library without libipt must decode ETM
# (its unit tests, the consumer).  The ETM-only perf and the simulator's
# suites are left out: CI's time (a perf build from cold is most of it).
check-decoders:
	@$(MAKE) --no-print-directory perf libauxsample DECODERS=pt
	@scripts/run-tests $(BUILD)/decoders-pt libauxsample
	@scripts/run-tests $(BUILD)/decoders-pt "CoreSight ETM full trace"
	@$(MAKE) --no-print-directory perf libauxsample DECODERS=etm
	@scripts/run-tests $(BUILD)/decoders-etm libauxsample
	@scripts/run-tests $(BUILD)/decoders-etm "CoreSight ETM"

# The suites too long for every check (tests/perf-suites-long), alone.
check-long: perf libauxsample
	@PERF_SUITES=$(CURDIR)/tests/perf-suites-long scripts/run-tests $(OUT) \
		"perf auxsample simulate: truth on programs"

demo: perf
	@scripts/demo $(BUILD)

patches:
	@scripts/export-patches $(BUILD)

# The upstream-ready series, new files carried by the patches that
# introduce them (patches/series.files), and its check that every prefix
# builds (libipt alone and with OpenCSD) and passes checkpatch.
series: $(BUILD)/assembled
	@scripts/series $(BUILD)

series-check: series
	@JOBS=$(JOBS) scripts/series-check $(BUILD) $(SERIES_FROM)

# Debian's asciidoc runs 'python3 -m asciidoc', which only the python3 it
# was installed for can run: /usr/bin first for the man pages.
install: perf
	@$(MAKE) --no-print-directory -C $(TREE)/tools/perf $(PERF_FLAGS) \
		DESTDIR=$(DESTDIR) install-bin
	@PATH=/usr/bin:$$PATH $(MAKE) --no-print-directory -C $(TREE)/tools/perf \
		$(PERF_FLAGS) DESTDIR=$(DESTDIR) install-man
ifneq ($(HAVE_VG),)
	@install -d $(DESTDIR)$(PREFIX)/libexec/perf-core/auxsample-vg
	@install -m 755 $(VG_TOOL) $(DESTDIR)$(PREFIX)/libexec/perf-core/auxsample-vg/
	@for f in vgpreload_core-amd64-linux.so default.supp; do \
		ln -sfn $(VG_PKGLIB)/$$f $(DESTDIR)$(PREFIX)/libexec/perf-core/auxsample-vg/$$f; done
endif

clean:
	rm -rf $(PERF_OUT)

distclean:
	rm -rf $(BUILD)

.PHONY: all assemble perf vgtool libauxsample fuzz-build fuzz check check-decoders check-long \
	demo patches series series-check install clean distclean FORCE
