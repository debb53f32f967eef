#!/bin/bash
# perf auxsample: windows before samples in CoreSight ETM full trace
# SPDX-License-Identifier: GPL-2.0
#
# perf record -Acs_etm, on kernels without AUX snapshots for cs_etm,
# records the ETM trace in full (timestamps on) beside the sampled
# events: script, stat and report must give every sample the window of
# trace before it, decoded as an AUX snippet, and perf report must show
# those windows as branch data.
#
# No shared recording has sampled events beside ETM trace (simpleperf's
# have none, and no timestamps: TRCCONFIGR.TS is clear).  So the test
# makes the perf.data such a recording would be from a real ETE trace
# with timestamps, OpenCSD's ts_marker snapshot (lib/auxsample_etm_fixture.py:
# its registers, its trace, its memory, samples just after each of its
# timestamps), and checks every sample's branches against those that
# trc_pkt_lister's output shows before the sample's last timestamp.  Real
# recordings with samples and timestamps found under
# $AUXSAMPLE_DATA/etm/<dir>/*.data are checked for consistency too.

set -u

data_dir=${AUXSAMPLE_DATA:-$(dirname "$0")/../../../../../../../shared/data}/etm
snapshot=$data_dir/opencsd/snapshots-ete/ts_marker
ppl=$data_dir/opencsd/expected/ete-ts_marker.ppl
lib=$(dirname "$0")/lib

if ! perf check feature -q auxsample || ! perf check feature -q libopencsd; then
	echo "Skip: perf built without ETM decoding (needs libopencsd, CORESIGHT=1)"
	exit 2
fi

# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
err=0
tmp=$(mktemp -d /tmp/__perf_test.auxsample_etm_window.XXXXX)
out=$tmp/out
auxsample_test_traps

# A cs_etm recording with sampled events beside its trace and ETMs that
# timestamp it (TRCCONFIGR bit 11): its number of samples in $samples,
# else 0.  A file perf cannot read is not such a recording; one that
# kills perf is a failure.
etm_samples() {
	local file=$1 ts=0 v rc

	samples=0
	perf report -D -i "$file" > "$tmp/dump" 2> "$out"
	rc=$?
	if killed $rc; then
		fail "$file: perf report -D killed by signal $((rc - 128))"
		return
	fi
	[ $rc -eq 0 ] || return
	grep -q 'PERF_RECORD_AUXTRACE_INFO type: 3' "$tmp/dump" || return
	for v in $(awk '$1 == "TRCCONFIGR" { print $2 }' "$tmp/dump"); do
		[ $((0x$v & 0x800)) -ne 0 ] && ts=1
	done
	[ $ts -eq 1 ] || return
	samples=$(grep -c 'PERF_RECORD_SAMPLE' "$tmp/dump")
}

# check FILE SAMPLES: every sample has a window, some of them decode, and
# perf report shows as many branches as perf auxsample script decodes, and
# every sample: those without a branch as one entry each.
check() {
	local file=$1 samples=$2 nosync branches vlbr without

	perf auxsample stat -i "$file" > "$out" 2>&1
	if ! grep -q "^ *$samples  samples beside a full trace" "$out"; then
		fail "$file: stat: not $samples samples with windows"
		return
	fi
	nosync=$(sed -n 's/^ *\([0-9]*\)  samples without a sync point$/\1/p' "$out")
	[ "${nosync:-$samples}" -lt "$samples" ] || fail "$file: no window holds a sync point"
	perf auxsample report -i "$file" > "$out" 2>&1
	grep -q "^# perf auxsample report: $samples samples beside a full trace" "$out" ||
		fail "$file: report: not $samples samples"
	perf auxsample script -i "$file" --json > "$out" 2>&1
	[ "$(grep -c '^{' "$out")" = "$samples" ] ||
		fail "$file: script --json: not $samples samples"
	branches=$(perf auxsample script -i "$file" 2>&1 >/dev/null |
		   sed -n 's/.* samples beside a full trace, \([0-9]*\) branches.*/\1/p')
	perf report -i "$file" --stdio > "$out" 2>&1
	vlbr=$(sed -n "s/^# Virtual LBR: \([0-9]*\) of $samples samples.*/\1/p" "$out")
	[ -n "$vlbr" ] || fail "$file: perf report: not $samples samples counted"
	if [ "${branches:-0}" -gt 0 ]; then
		without=$((samples - ${vlbr:-0}))
		grep -q "^# Event count (approx.): $((branches + without))\$" "$out" ||
			fail "$file: perf report: not $branches window branches" \
			     "and $without samples without"
		grep -q 'Source Symbol.*Target Symbol' "$out" ||
			fail "$file: perf report: not in branch mode"
	fi
	echo "$file: $samples samples with windows, ${nosync:-?} without a sync point," \
	     "${branches:-0} branches"
}

# fixture: the windows of samples beside a real ETE trace with timestamps.
fixture() {
	local data=$tmp/ts_marker.data samples=13 depth branches nr_ts

	if ! python3 "$lib/auxsample_etm_fixture.py" make "$snapshot" "$ppl" "$data" \
			> "$out" 2>&1; then
		fail "cannot make a perf.data of the ts_marker snapshot"
		return
	fi
	# One sample before the first timestamp, one after each of 12 values.
	perf auxsample stat -i "$data" > "$out" 2>&1
	grep -q "^ *$samples  samples beside a full trace" "$out" ||
		fail "stat: not $samples samples with windows"
	grep -q '^ *1  samples without a sync point' "$out" ||
		fail "stat: not just the sample before the first timestamp without a window"
	grep -q '^ *0  decode errors' "$out" || fail "stat: decode errors"
	# -v counts the timestamp packets trc_pkt_lister lists, by their ETM name.
	nr_ts=$(grep -c 'I_TIMESTAMP : ' "$ppl")
	perf auxsample stat -v -i "$data" > "$out" 2>&1
	if ! grep -q "^CPU 0: [0-9]* bytes of ETM trace, $nr_ts timestamp packets" "$out" ||
	   grep -q "TSC\|stops" "$out"; then
		fail "stat -v: not the ETM trace's $nr_ts timestamp packets, or Intel PT words"
	fi
	perf auxsample report -i "$data" > "$out" 2>&1
	grep -q "^# perf auxsample report: $samples samples beside a full trace, 12 decoded" \
		"$out" ||
		fail "report: not 12 of $samples samples decoded"
	for depth in 64 16; do
		perf auxsample script --json --depth $depth -i "$data" > "$tmp/json" 2> "$out"
		if python3 "$lib/auxsample_etm_fixture.py" check "$data.expect" "$tmp/json" $depth \
				> "$out" 2>&1; then
			echo "ts_marker, depth $depth: $(cat "$out")"
		else
			fail "the windows' branches (depth $depth)" \
			     "are not trc_pkt_lister's before the sample"
		fi
	done
	branches=$(perf auxsample script -i "$data" 2>&1 >/dev/null |
		   sed -n 's/.* samples beside a full trace, \([0-9]*\) branches.*/\1/p')
	perf report -i "$data" --stdio > "$out" 2>&1
	grep -q 'Source Symbol.*Target Symbol' "$out" || fail "perf report: not in branch mode"
	# Every sample, the one before the first timestamp too, without trace,
	# as one entry beside the branches.  (Stock perf reads none of it:
	# its cs_etm decoding is not built on x86.)
	grep -q "^# Virtual LBR: 12 of $samples samples; without one: 1 no trace\$" "$out" ||
		fail "perf report: not 12 of the $samples samples with a virtual LBR"
	grep -q "^# Event count (approx.): $((branches + 1))\$" "$out" ||
		fail "perf report: not the $branches branches of the windows and the sample without"
	# The windows run through two DSOs: where the heap puts their struct
	# dso must not reorder --branch-history's chains of equal hits.
	perf report -i "$data" --stdio --branch-history > "$tmp/bh" 2>&1
	GLIBC_TUNABLES=glibc.malloc.tcache_count=0 \
		perf report -i "$data" --stdio --branch-history > "$out" 2>&1
	cmp -s "$tmp/bh" "$out" ||
		fail "perf report --branch-history: another output with another heap layout"

	# perf auxsample inject: the windows as branch stacks, as for Intel PT.
	perf auxsample inject -i "$data" -o "$tmp/injected.data" > "$out" 2>&1 ||
		fail "inject failed"
	grep -q "$samples samples written to .*, 12 decoded" "$out" ||
		fail "inject: not 12 of $samples samples decoded"
	perf report -b --stdio -i "$tmp/injected.data" > "$out" 2>&1
	grep -q "^# Event count (approx.): $branches\$" "$out" ||
		fail "inject: not the $branches branches of the windows"

	# Timestamps that are not the kernel's time place no sample: it says so.
	if python3 "$lib/auxsample_etm_fixture.py" make "$snapshot" "$ppl" "$data" -1 \
			> "$out" 2>&1; then
		perf auxsample stat -i "$data" > "$out" 2>&1
		if ! grep -q "^ *$samples  samples without a sync point" "$out" ||
		   ! grep -q "ETM timestamps are not the kernel's time" "$out"; then
			fail "ts_source -1: samples got windows, or no warning"
		fi
	else
		fail "cannot make a perf.data of the ts_marker snapshot, ts_source -1"
	fi
}

found=0
if [ -r "$snapshot/snapshot.ini" ] && [ -r "$ppl" ] && command -v python3 > /dev/null; then
	found=1
	fixture
fi
for file in "$data_dir"/*/*.data; do
	[ -r "$file" ] || continue
	etm_samples "$file"
	[ "$samples" -gt 0 ] || continue
	found=1
	check "$file" "$samples"
done

if [ $found -eq 0 ] && [ $err -eq 0 ]; then
	echo "Skip: no OpenCSD ts_marker snapshot (or no python3), and no cs_etm recording" \
	     "with timestamps and sampled events beside the trace in $data_dir"
	exit 2
fi
exit $err
