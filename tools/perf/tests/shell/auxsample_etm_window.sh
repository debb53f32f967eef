#!/bin/bash
# perf auxsample: windows before samples in CoreSight ETM full trace
# SPDX-License-Identifier: GPL-2.0
#
# perf record -Acs_etm, on kernels without AUX snapshots for cs_etm,
# records the ETM trace in full (timestamps on) beside the sampled
# events: script, stat and report must give every sample the window of
# trace before it, decoded as an AUX snippet, and perf report must show
# those windows as branch data.  That needs such a recording from ETM
# hardware under $AUXSAMPLE_DATA/etm/<dir>/*.data: the shared simpleperf
# recordings have no sampled events and no timestamps (TRCCONFIGR.TS is
# clear), so the test skips until one is there.  Where the windows are
# cut, on real ETM buffers and timestamps, libauxsample's unit tests
# check.

set -u

data_dir=${AUXSAMPLE_DATA:-$(dirname "$0")/../../../../../../../shared/data}/etm

if ! perf check feature -q auxsample; then
	echo "Skip: perf built without libauxsample (needs libipt and libopencsd)"
	exit 2
fi

err=0
tmp=$(mktemp -d /tmp/__perf_test.auxsample_etm_window.XXXXX)
out=$tmp/out

cleanup() {
	rm -rf "$tmp"
	trap - EXIT TERM INT
}
trap 'cleanup; exit 1' TERM INT
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	head -c 3000 "$out"
	err=1
}

# A cs_etm recording with sampled events beside its trace and ETMs that
# timestamp it (TRCCONFIGR bit 11): its number of samples, or nothing.
etm_samples() {
	local file=$1 ts=0 v

	perf report -D -i "$file" > "$tmp/dump" 2> /dev/null || return
	grep -q 'PERF_RECORD_AUXTRACE_INFO type: 3' "$tmp/dump" || return
	for v in $(awk '$1 == "TRCCONFIGR" { print $2 }' "$tmp/dump"); do
		[ $((0x$v & 0x800)) -ne 0 ] && ts=1
	done
	[ $ts -eq 1 ] || return
	grep -c 'PERF_RECORD_SAMPLE' "$tmp/dump"
}

# check FILE SAMPLES: every sample has a window, some of them decode, and
# perf report shows as many branches as perf auxsample script decodes.
check() {
	local file=$1 samples=$2 nosync branches

	perf auxsample stat -i "$file" > "$out" 2>&1
	if ! grep -q "^ *$samples  AUX samples" "$out"; then
		fail "$file: stat: not $samples samples with windows"
		return
	fi
	nosync=$(sed -n 's/^ *\([0-9]*\)  samples without a sync point$/\1/p' "$out")
	[ "${nosync:-$samples}" -lt "$samples" ] || fail "$file: no window holds a sync point"
	perf auxsample report -i "$file" > "$out" 2>&1
	grep -q "^# perf auxsample report: $samples AUX samples" "$out" ||
		fail "$file: report: not $samples samples"
	perf auxsample script -i "$file" --json > "$out" 2>&1
	[ "$(grep -c '^{' "$out")" = "$samples" ] || fail "$file: script --json: not $samples samples"
	branches=$(perf auxsample script -i "$file" 2>&1 >/dev/null |
		   sed -n 's/.* AUX samples, \([0-9]*\) branches.*/\1/p')
	perf report -i "$file" --stdio > "$out" 2>&1
	if [ "${branches:-0}" -gt 0 ]; then
		grep -q "^# Event count (approx.): $branches\$" "$out" ||
			fail "$file: perf report: not $branches window branches"
		grep -q 'Source Symbol.*Target Symbol' "$out" ||
			fail "$file: perf report: not in branch mode"
	fi
	echo "$file: $samples samples with windows, ${nosync:-?} without a sync point, ${branches:-0} branches"
}

found=0
for file in "$data_dir"/*/*.data; do
	[ -r "$file" ] || continue
	samples=$(etm_samples "$file")
	[ "${samples:-0}" -gt 0 ] || continue
	found=1
	check "$file" "$samples"
done

if [ $found -eq 0 ]; then
	echo "Skip: no cs_etm recording with timestamps and sampled events beside the trace in $data_dir (simpleperf's have neither)"
	exit 2
fi
exit $err
