#!/bin/bash
# perf auxsample: inputs that once crashed or hung perf
# SPDX-License-Identifier: GPL-2.0
#
# The perf.data files of $AUXSAMPLE_DATA/repro (found by fuzzing, see its
# README) and the real cs_etm files of etm/simpleperf that perf 6.12 died
# on, through the commands that crashed or hung on them.  Each must end
# within a time limit with a clear error or with its decode errors
# counted, never by a signal.  The libauxsample snippets of repro/ are
# unit tests of the library.
#
# The simulated recordings trace /tmp/fuzz/workload, a build of
# lib/auxsample_workload.c: the test builds it again under a --symfs
# directory, as the fuzzer did.

set -u

data=${AUXSAMPLE_DATA:-$(dirname "$0")/../../../../../../../shared/data}
repro=$data/repro
simpleperf=$data/etm/simpleperf
lib=$(dirname "$0")/lib
limit=${AUXSAMPLE_REPRO_TIMEOUT:-120}

if ! perf check feature -q auxsample || ! perf check feature -q libopencsd; then
	echo "Skip: perf built without ETM decoding (needs libopencsd, CORESIGHT=1)"
	exit 2
fi
if [ ! -d "$repro" ]; then
	echo "Skip: no $repro (AUXSAMPLE_DATA=<shared/data>)"
	exit 2
fi

# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
err=0
checked=0
tmp=$(mktemp -d /tmp/__perf_test.auxsample_repro.XXXXX)
out=$tmp/out
auxsample_test_traps

# run WHAT PERF-ARGS...: perf within $limit seconds, its output in $out;
# its exit status.  Killed by a signal, still running or a sanitizer
# report (perf built with SANITIZE=): a failure.
run() {
	local what=$1 rc

	shift
	checked=$((checked + 1))
	timeout -k 10 "$limit" perf "$@" > "$out" 2>&1
	rc=$?
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		fail "$what: still running after ${limit}s"
	elif killed $rc; then
		fail "$what: killed by signal $((rc - 128))"
	elif grep -q 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' "$out"; then
		fail "$what: sanitizer report"
	fi
	return $rc
}

# expect_ok WHAT PERF-ARGS...: perf must succeed.
expect_ok() {
	local what=$1 rc

	run "$@"
	rc=$?
	[ $rc -eq 0 ] || [ $rc -ge 124 ] || fail "$what: exit $rc"
	return $rc
}

symfs=$tmp/symfs
mkdir -p "$symfs/tmp/fuzz"
if ! cc -O1 -static -o "$symfs/tmp/fuzz/workload" "$lib/auxsample_workload.c" -lpthread \
		> "$out" 2>&1; then
	echo "cannot build the static test program: the simulated recordings are not decoded"
	cat "$out"
	rm -f "$symfs/tmp/fuzz/workload"
fi

# A loop of direct jumps that consumes no trace (8 flipped bits): it was
# decoded forever.  Now it is a decode error, counted.
hang=$repro/REPRO-perfdata-auxsample-script-hang.m0289.data
if [ -r "$hang" ]; then
	expect_ok "hang: script" auxsample script --symfs "$symfs" -i "$hang"
	expect_ok "hang: report" auxsample report --symfs "$symfs" -i "$hang"
	# Without the workload nothing decodes: a clear error, then.
	if [ -e "$symfs/tmp/fuzz/workload" ]; then
		expect_ok "hang: inject" auxsample inject --symfs "$symfs" -i "$hang" \
			-o "$tmp/hang-injected.data"
	else
		run "hang: inject" auxsample inject -i "$hang" -o "$tmp/hang-injected.data"
	fi
	expect_ok "hang: perf report" report --stdio --symfs "$symfs" -i "$hang"
	if expect_ok "hang: stat" auxsample stat --symfs "$symfs" -i "$hang" &&
	   [ -e "$symfs/tmp/fuzz/workload" ]; then
		errors=$(sed -n 's/^ *\([0-9]*\)  decode errors$/\1/p' "$out")
		[ "${errors:-0}" -gt 0 ] || fail "hang: stat counts no decode error"
		echo "hang: $(grep 'does not match' "$out" | sed 's/^ *//')"
	fi
fi

# The hot-path report kept the dsos of exited threads without a
# reference (a use-after-free under AddressSanitizer).
uaf=$repro/REPRO-auxsample-report-json-dso-uaf.sim1.data
if [ -r "$uaf" ] && expect_ok "uaf: report --json" auxsample report --json --symfs "$symfs" \
		-i "$uaf"; then
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$out" ||
		fail "uaf: report --json: not JSON"
	if [ -e "$symfs/tmp/fuzz/workload" ]; then
		grep -q '"branches":0,' "$out" && fail "uaf: report --json: no branch decoded"
		expect_ok "uaf: report -d" auxsample report -d workload --symfs "$symfs" -i "$uaf"
		grep -q '^# Branch edges: [1-9]' "$out" || fail "uaf: report -d workload: no edge"
	fi
fi

# A feature bit past the last feature perf knows: perf inject called
# through feat_ops[] past its end.  The output leaves it out.
feat=$repro/REPRO-perfdata-inject-unknown-feature-bit.m0012.data
if [ -r "$feat" ]; then
	expect_ok "feature bit: inject" inject -i "$feat" -o "$tmp/feat-injected.data" &&
		expect_ok "feature bit: the injected header" report --header-only \
			-i "$tmp/feat-injected.data"
	if [ -e "$symfs/tmp/fuzz/workload" ]; then
		expect_ok "feature bit: auxsample inject" auxsample inject --symfs "$symfs" \
			-i "$feat" -o "$tmp/feat-auxsample.data"
	elif run "feature bit: auxsample inject" auxsample inject -i "$feat" \
			-o "$tmp/feat-auxsample.data" || ! grep -q "none of the" "$out"; then
		fail "feature bit: auxsample inject: no clear error without the workload"
	fi
fi

# A CPU topology section whose strings have no zero in them: strlen()
# ran past the heap buffer in every command.
topo=$repro/REPRO-perfdata-upstream-header-cpu-topology.data
if [ -r "$topo" ]; then
	run "topology: header" report --header-only -i "$topo"
	run "topology: perf report" report --stdio -i "$topo"
	run "topology: perf script" script -i "$topo"
fi

# Real cs_etm files without an auxtrace index: perf 6.12 dereferenced
# the NULL decoder of their queues.  Now their trace is said not to be
# decoded.
for file in perf_etm.data perf_kernel.data perf_with_unformatted_trace.data; do
	[ -r "$simpleperf/$file" ] || continue
	run "$file: perf report" report --stdio -i "$simpleperf/$file"
	run "$file: perf report -D" report -D -i "$simpleperf/$file"
	run "$file: perf script" script -i "$simpleperf/$file"
	if ! grep -q 'is not decoded\|CoreSight' "$out"; then
		fail "$file: perf script says nothing of the trace it does not decode"
	fi
done

if [ $checked -eq 0 ] && [ $err -eq 0 ]; then
	echo "Skip: none of the repro files in $repro"
	exit 2
fi
echo "$checked commands on the repro files"
exit $err
