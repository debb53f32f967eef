#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fake sysfs trees for tests on machines without the PMUs: point
# SYSFS_PATH at the directory and perf sees the PMUs made here, laid out
# as the kernel lays them out.

# fake_pmu DIR NAME TYPE [FILE CONTENT]...: a PMU NAME of perf_event_attr
# type TYPE, with the given files (format/..., caps/..., events/...).
fake_pmu() {
	local dir=$1/bus/event_source/devices/$2

	mkdir -p "$dir/format" "$dir/events" "$dir/caps"
	echo "$3" > "$dir/type"
	shift 3
	while [ $# -gt 0 ]; do
		mkdir -p "$(dirname "$dir/$1")"
		echo "$2" > "$dir/$1"
		shift 2
	done
}

# fake_intel_pt DIR TYPE: intel_pt as a Skylake-era kernel publishes it.
fake_intel_pt() {
	fake_pmu "$1" intel_pt "$2" \
		format/pt config:0 format/cyc config:1 format/pwr_evt config:4 \
		format/fup_on_ptw config:5 format/mtc config:9 format/tsc config:10 \
		format/noretcomp config:11 format/ptw config:12 format/branch config:13 \
		format/mtc_period config:14-17 format/cyc_thresh config:19-22 \
		format/psb_period config:24-27 \
		caps/cr3_filtering 1 caps/cycle_thresholds 3fff caps/ip_filtering 1 \
		caps/max_subleaf 1 caps/mtc 1 caps/mtc_periods 249 \
		caps/num_address_ranges 2 caps/power_event_trace 0 caps/psb_cyc 1 \
		caps/psb_periods 3f caps/ptwrite 0 caps/single_range_output 1 \
		caps/topa_multiple_entries 1 caps/topa_output 1 caps/tsc_art_ratio 2:188 \
		nr_addr_filters 2 max_nonturbo_ratio 22
}

# fake_cs_etm DIR TYPE: the CoreSight ETM PMU's sysfs layout.
fake_cs_etm() {
	fake_pmu "$1" cs_etm "$2" \
		format/cycacc config:12 format/contextid config:14 format/timestamp config:28 \
		format/retstack config:29 format/sinkid config2:0-31 nr_addr_filters 8
}
