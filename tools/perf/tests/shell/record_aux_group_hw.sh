#!/bin/bash
# perf record -A with real Intel PT
# SPDX-License-Identifier: GPL-2.0
#
# Records for real the RFC's two command lines, where the machine has
# Intel PT; skipped elsewhere.

set -u

pmu=/sys/bus/event_source/devices/intel_pt
if [ ! -d "$pmu" ]; then
	echo "Skip: no Intel PT PMU ($pmu): recording AUX samples needs Intel PT hardware"
	exit 2
fi

# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
err=0
tmp=$(mktemp -d /tmp/__perf_test.aux_group_hw.XXXXX)
data=$tmp/perf.data
out=$tmp/out
auxsample_test_traps

# Samples of the event carry AUX data: 'perf report -D' shows their size.
check_aux_samples() {
	local what=$1 n

	perf report -D -i "$data" > "$out" 2>&1
	n=$(grep -c 'AUX size [1-9]' "$out")
	[ "$n" -gt 0 ] || fail "$what: no sample carries AUX data"
	echo "$what: $n samples with AUX data"
}

what="-Aintel_pt -e cycles:u,instructions:u,branch-misses:u"
if ! perf record -o "$data" -Aintel_pt -e 'cycles:u,instructions:u,branch-misses:u' \
		-- perf test -w brstack > "$out" 2>&1; then
	fail "$what: record failed"
else
	check_aux_samples "$what"
	# perf's own decoder turns the snippets into a virtual LBR.
	perf script -i "$data" --itrace=L16 -F ip,brstack > "$out" 2>&1
	grep -q '/' "$out" || fail "$what: --itrace=L gives no branch stacks"
fi

if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
	echo "system wide recording needs root or perf_event_paranoid <= 0: skipped -a"
	exit $err
fi

what="-Aintel_pt -e 'sched:*' -a"
if ! perf record -o "$data" -Aintel_pt -e 'sched:sched_switch' -a -- sleep 1 > "$out" 2>&1; then
	fail "$what: record failed"
else
	check_aux_samples "$what"
fi
exit $err
