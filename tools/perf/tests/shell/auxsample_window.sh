#!/bin/bash
# perf auxsample: windows before samples in simulated Intel PT full trace
# SPDX-License-Identifier: GPL-2.0
#
# Simulated full-trace recordings (perf auxsample simulate --full-trace:
# what 'perf record -e intel_pt//u -e instructions:u' writes): perf's own
# decoder must read them without errors; perf auxsample script must hand
# every sample the true branches before it (its window of the trace,
# decoded as an AUX snippet), the same as perf's own --itrace=L where
# perf's timing places samples exactly (CYC); a damaged copy must decode
# without a crash.

set -u

# shellcheck source=lib/auxsample_sim.sh
. "$(dirname "$0")"/lib/auxsample_sim.sh
auxsample_sim_check
err=0
lib=$(dirname "$0")/lib
tmp=$(mktemp -d /tmp/__perf_test.auxsample_window.XXXXX)
data=$tmp/perf.data
out=$tmp/out
auxsample_test_traps

auxsample_sim_workload "$tmp/workload" "$out"
wl=$tmp/workload

# The simulated programs run with a fixed environment and working
# directory: their start-up, and so where the samples fall, must not
# depend on the caller's environment.  (With a long PWD, the signal
# workload's last sample, at the very IP where sigreturn resumes, was
# matched to a stop of the loop's first iteration: a known weakness of
# the greedy stop matching when the trace has few TSC packets.)
# The ptrace engine too: under Valgrind the start-up runs other code
# (its environment, its CPU), the samples fall elsewhere, and with -c 100
# one lands where the greedy stop matching above goes wrong.
perf_bin=$(command -v perf)
sim() {
	(cd / && env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$perf_bin" auxsample simulate \
		--engine=ptrace "$@")
}

# check WHAT DEPTH SIMULATE-OPTIONS -- COMMAND: a full trace that perf
# reads without errors, and windows that are the truth.
check() {
	local what=$1 depth=$2

	shift 2
	if ! sim --full-trace -o "$data" "$@" > "$out" 2>&1; then
		fail "$what: simulate failed"
		return 1
	fi
	auxsample_sim_decodes "$what" "$data" || return 1
	if ! python3 "$lib/auxsample_truth.py" --auxsample "$data" "$depth" perf > "$out" 2>&1; then
		fail "$what: the windows of perf auxsample script are not the truth"
		return 1
	fi
	echo "$what: $(cat "$out")"
}

check "branches, calls, jump table, recursion" 64 -c 700 -- "$wl" branches 40
check "setjmp/longjmp" 64 -c 700 -- "$wl" longjmp 20
check "signal handler" 64 -c 700 -- "$wl" signal 20
check "syscall loop" 64 -c 700 -- "$wl" syscalls 40
check "two threads" 64 -c 700 -- "$wl" threads 20
check "no return compression" 64 --noretcomp -c 700 -- "$wl" branches 40
check "PSB every 512 bytes" 64 --psb-period 512 -c 700 -- "$wl" branches 40
check "dense samples" 64 -c 100 -- "$wl" branches 10
check "dynamically linked /bin/true" 64 -c 3000 -- /bin/true
check "deep windows" 1024 -c 700 -- "$wl" branches 40

# The file is a full trace: no AUX samples, the trace in AUXTRACE records.
sim --full-trace -o "$data" -c 700 -- "$wl" branches 20 > /dev/null 2>&1
perf evlist -v -i "$data" > "$out" 2>&1
grep -q 'aux_sample_size' "$out" && fail "full trace: an event samples AUX data"
perf report -D -i "$data" > "$out" 2>&1
grep -q 'PERF_RECORD_AUXTRACE' "$out" || fail "full trace: no PERF_RECORD_AUXTRACE"
samples=$(auxsample_sim_samples "$data.truth")
perf auxsample stat -i "$data" > "$out" 2>&1
grep -q "^ *$samples  samples beside a full trace" "$out" ||
	fail "stat: not $samples samples with windows"
grep -q '^ *0  decode errors' "$out" || fail "stat: decode errors"
perf auxsample report -i "$data" > "$out" 2>&1
grep -q "^# perf auxsample report: $samples samples beside a full trace, $samples decoded" "$out" ||
	fail "report: not $samples samples decoded"
# --window-size: windows of 1K, as 1K snippets would be, many without a PSB.
perf auxsample stat -i "$data" --window-size 1K > "$out" 2>&1
bytes=$(sed -n 's/^ *[0-9]*  bytes of trace (\([0-9]*\) per sample)$/\1/p' "$out")
[ "${bytes:-1025}" -le 1024 ] || fail "--window-size 1K: ${bytes:-?} bytes per window"
grep -q '^ *0  samples without a sync point' "$out" &&
	fail "--window-size 1K: every window has a PSB"
perf auxsample script -i "$data" --window-size 100 > "$out" 2>&1
rc=$?
[ $rc -ne 0 ] || fail "--window-size 100 taken"
killed $rc && fail "--window-size 100: killed by signal $((rc - 128))"
grep -q 'window-size must be from 256 bytes to 16M' "$out" ||
	fail "--window-size 100: no clear error"
perf auxsample script -i "$data" --json > "$out" 2>&1
[ "$(grep -c '^{' "$out")" = "$samples" ] || fail "script --json: not $samples samples"

# perf report shows the windows' virtual LBRs as branch data: as many
# branches as perf auxsample script decodes; --itrace is perf's own.
branches=$(perf auxsample script -i "$data" 2>&1 >/dev/null |
	   sed -n 's/.* samples beside a full trace, \([0-9]*\) branches.*/\1/p')
perf report -i "$data" --stdio > "$out" 2>&1
grep -q "^# Event count (approx.): $branches\$" "$out" ||
	fail "report: not $branches window branches"
grep -q 'Source Symbol.*Target Symbol' "$out" || fail "report: not in branch mode"
perf report -i "$data" --stdio --itrace=i10000 > "$out" 2>&1
grep -q "^# Samples: .* of event 'instructions:uH'" "$out" ||
	fail "report --itrace: perf's own decoder did not synthesize samples"

# perf auxsample inject: the samples with their windows' virtual LBRs as
# branch stacks, for stock tools; the trace itself left out.
perf auxsample inject -i "$data" -o "$tmp/injected.data" > "$out" 2>&1 || fail "inject failed"
grep -q "$samples samples written to .*, $samples decoded" "$out" ||
	fail "inject: not $samples samples decoded"
perf evlist -v -i "$tmp/injected.data" | grep '^instructions:u:' > "$out"
grep -q 'sample_type: [A-Z|]*BRANCH_STACK' "$out" || fail "inject: no BRANCH_STACK in sample_type"
perf report -b --stdio -i "$tmp/injected.data" > "$out" 2>&1
grep -q "^# Event count (approx.): $branches\$" "$out" || fail "inject: not $branches branches"
perf report -D -i "$tmp/injected.data" > "$out" 2>&1
grep -q 'PERF_RECORD_AUXTRACE ' "$out" && fail "inject: the trace is still there"

# With cycle-accurate timing perf's own decoder places every sample where
# it was taken: its --itrace=L entries are ours, entry for entry.
if check "timed, MTC and CYC" 64 --mtc --cyc -c 700 -- "$wl" branches 40; then
	if python3 "$lib/auxsample_window.py" "$data" 64 perf > "$out" 2>&1; then
		echo "perf --itrace=L64 against perf auxsample script: $(cat "$out")"
	else
		fail "perf's --itrace=L64 differs from perf auxsample script's windows"
	fi
fi

# Samples that are not where their PMI stopped the trace (their IPs
# changed in a copy) get the trace up to the last TSC before them: older
# branches only, never one from after the sample.
if sim --full-trace --psb-period 512 -o "$data" -c 700 -- "$wl" branches 40 > "$out" 2>&1 &&
   python3 "$lib/auxsample_window_time.py" "$data" "$tmp/moved.data" 16 perf > "$out" 2>&1; then
	echo "windows by time: $(cat "$out")"
else
	fail "windows by time"
fi

# A damaged copy: every 97th byte of the trace changed, PSBs spared so
# that decoding goes on after each error; no crash.
sim --full-trace -o "$data" -c 300 -- "$wl" branches 20 > /dev/null 2>&1
python3 - "$data" "$tmp/bad.data" <<'PY' || fail "cannot damage a copy"
import struct, sys
buf = bytearray(open(sys.argv[1], 'rb').read())
off, size = struct.unpack_from('<QQ', buf, 40)	# the data section
pos, end, damaged = off, off + size, 0
while pos < end:
    typ, misc, hsize = struct.unpack_from('<IHH', buf, pos)
    if hsize == 0:
        break
    nxt = pos + hsize
    if typ == 71:			# PERF_RECORD_AUXTRACE
        n = struct.unpack_from('<Q', buf, pos + 8)[0]
        for i in range(pos + hsize + 40, pos + hsize + n, 97):
            if buf[i] not in (0x02, 0x82):
                buf[i] ^= 0xa5
                damaged += 1
        nxt += n
    pos = nxt
assert damaged, 'no trace to damage'
open(sys.argv[2], 'wb').write(buf)
PY
for cmd in script stat report; do
	perf auxsample $cmd -i "$tmp/bad.data" > "$out" 2>&1
	rc=$?
	[ $rc -ge 128 ] && fail "$cmd on a damaged copy: killed by signal $((rc - 128))"
done
perf auxsample stat -i "$tmp/bad.data" > "$out" 2>&1
grep -q '^ *0  decode errors' "$out" && fail "stat: no decode errors in a damaged copy"
echo "damaged copy: $(grep -E 'decode errors|taken branches' "$out" | tr -s ' ' | tr '\n' ',')"
exit $err
