# SPDX-License-Identifier: GPL-2.0
#
# perf with AUX-area sampling, virtual LBR and persistent events: an overlay
# of our files plus patches/series on the Linux 6.12 perf sources.
#
#   make                 assemble build/linux, overlay, patch, build build/perf/perf
#   make check           build, then run all our tests (one closing summary line)
#   make libauxsample    build the decoding library and its unit tests
#   make patches         export commits made in build/linux to patches/
#   make install         install perf and its man pages under $(PREFIX)
#   make clean           remove the perf build outputs (keep build/linux)
#   make distclean       remove build/ altogether
#
# KSRC=<tree or tarball> picks other Linux sources, PREFIX=<dir> the install
# prefix, V=1 shows the commands, PERF_MAKE_FLAGS=... adds perf build flags.

KSRC		?= /usr/src/linux-source-6.12.tar.xz
PREFIX		?= /usr/local
BUILD		:= $(CURDIR)/build
TREE		:= $(BUILD)/linux
PERF_OUT	:= $(BUILD)/perf
PERF		:= $(PERF_OUT)/perf

# Python and Perl scripting stay off: they need distribution-specific
# development packages and nothing here uses them; PYTHON_WORD still names
# the interpreter that runs the attr tests (tests/attr.py).  BPF skeletons
# need clang and bpftool.  CoreSight (libopencsd) is wanted for ETM
# decoding.
PERF_FLAGS	:= O=$(PERF_OUT) NO_LIBPYTHON=1 NO_LIBPERL=1 BUILD_BPF_SKEL=0 \
		   PYTHON_WORD=python3 \
		   CORESIGHT=1 prefix=$(PREFIX) $(PERF_MAKE_FLAGS)
ifneq ($(shell command -v ccache 2>/dev/null),)
PERF_FLAGS	+= CC="ccache gcc" HOSTCC="ccache gcc"
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

perf: $(BUILD)/assembled
	@scripts/overlay $(BUILD)
	@mkdir -p $(PERF_OUT)
	@$(MAKE) --no-print-directory -j$(JOBS) -C $(TREE)/tools/perf $(PERF_FLAGS)

libauxsample:
	@mkdir -p $(BUILD)/auxsample
	@$(MAKE) --no-print-directory -s -C tools/lib/auxsample O=$(BUILD)/auxsample tests

check: perf libauxsample
	@scripts/run-tests $(BUILD)

demo: perf
	@scripts/demo $(BUILD)

patches:
	@scripts/export-patches $(BUILD)

# Debian's asciidoc runs 'python3 -m asciidoc', which only the python3 it
# was installed for can run: /usr/bin first for the man pages.
install: perf
	@$(MAKE) --no-print-directory -C $(TREE)/tools/perf $(PERF_FLAGS) \
		DESTDIR=$(DESTDIR) install-bin
	@PATH=/usr/bin:$$PATH $(MAKE) --no-print-directory -C $(TREE)/tools/perf \
		$(PERF_FLAGS) DESTDIR=$(DESTDIR) install-man

clean:
	rm -rf $(PERF_OUT)

distclean:
	rm -rf $(BUILD)

.PHONY: all assemble perf libauxsample check demo patches install clean distclean FORCE
