#!/bin/bash
# perf auxsample inject: virtual LBR as branch stacks for stock perf tools
# SPDX-License-Identifier: GPL-2.0
#
# Simulated Intel PT sample-mode recordings are injected: the output's
# samples must carry branch stacks (PERF_SAMPLE_BRANCH_STACK) and no AUX
# data, and stock perf script -F ip,brstack (what perf2bolt and
# llvm-profgen read) must show exactly the virtual LBR that perf auxsample
# script decodes from the input, sample by sample, in the same order.

set -u

# shellcheck source=lib/auxsample_sim.sh
. "$(dirname "$0")"/lib/auxsample_sim.sh
auxsample_sim_check

# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
err=0
tmp=$(mktemp -d /tmp/__perf_test.auxsample_inject.XXXXX)
data=$tmp/perf.data
injected=$tmp/injected.data
out=$tmp/out
auxsample_test_traps

auxsample_sim_workload "$tmp/workload" "$out"
wl=$tmp/workload

# same_branches WHAT INPUT OUTPUT DEPTH [ARGS...]: perf script -F ip,brstack on the
# injected OUTPUT gives, sample by sample, the IPs and the branches (from,
# to, newest first) of perf auxsample script --depth DEPTH on INPUT.
# ARGS go to perf script.
same_branches() {
	local what=$1 input=$2 output=$3 depth=$4

	shift 4
	perf auxsample script -i "$input" --depth "$depth" > "$tmp/auxsample" 2> /dev/null
	if ! perf script -i "$output" -F ip,brstack "$@" > "$tmp/brstack" 2> "$out"; then
		fail "$what: perf script -F ip,brstack failed"
		return
	fi
	if ! python3 - "$tmp/auxsample" "$tmp/brstack" "$depth" > "$out" 2>&1 <<'PY'; then
import sys
want, got = [], []
for line in open(sys.argv[1]):
    f = line.split()
    if not f:
        continue
    if not line.startswith('\t'):
        want.append((int(f[f.index('instructions:u:') + 1], 16), []))
    elif f[0] == 'branch':
        arrow = f.index('->')
        want[-1][1].append(tuple(0 if x == '?' else int(x, 16)
                                 for x in (f[1], f[arrow + 1])))
for line in open(sys.argv[2]):
    f = line.split()
    if f:
        got.append((int(f[0], 16),
                    [tuple(int(x, 16) for x in e.split('/')[:2]) for e in f[1:]]))
assert want, 'perf auxsample script shows no samples'
assert len(got) == len(want), '%d samples, perf auxsample script has %d' % (len(got), len(want))
for i, (w, g) in enumerate(zip(want, got)):
    assert g[0] == w[0], 'sample %d: ip %#x, perf auxsample script %#x' % (i, g[0], w[0])
    assert g[1] == w[1], 'sample %d ip %#x: %s, perf auxsample script %s' % \
        (i, g[0], g[1][:3], w[1][:3])
    assert len(g[1]) <= int(sys.argv[3]), 'sample %d: deeper than --depth' % i
print('%d samples, %d branches' % (len(got), sum(len(g[1]) for g in got)))
PY
		fail "$what"
		return
	fi
	echo "$what: $(cat "$out")"
}

# count_records FILE: 'TYPE count' for each PERF_RECORD_* that perf report -D shows.
count_records() {
	perf report -D -i "$1" 2> /dev/null | grep -o ' PERF_RECORD_[A-Z0-9_]*' | sort | uniq -c
}

perf auxsample simulate -o "$data" --no-tsc -c 700 -- "$wl" branches 40 > /dev/null 2>&1 ||
	fail "simulate failed"
samples=$(auxsample_sim_samples "$data.truth")

# The summary: every sample written and decoded.
if ! perf auxsample inject -i "$data" -o "$injected" > "$out" 2>&1; then
	fail "inject failed"
fi
summary="$samples samples written to $injected, $samples decoded, 0 failed"
grep -q "^\[ perf auxsample inject: $summary" "$out" ||
	fail "inject: not $samples samples written and decoded"

# Stock perf script reads the virtual LBR as branch stacks: every sample
# has branches, the very ones perf auxsample script decodes.
same_branches "perf script -F ip,brstack" "$data" "$injected" 64
awk 'NF < 2 { exit 1 }' "$tmp/brstack" || fail "a sample without branches"
[ "$(wc -l < "$tmp/brstack")" = "$samples" ] || fail "not $samples samples in perf script"

# A pipe (perf record -o -, here perf inject -o -): the same samples as
# from the file, and a header with the pipe's features that perf reads.
perf inject -i "$data" -o - 2> /dev/null |
	perf auxsample inject -i - -o "$tmp/pipe.data" > "$out" 2>&1
rc=$?
killed $rc && fail "inject -i -: killed by signal $((rc - 128))"
if [ $rc -ne 0 ]; then
	fail "inject -i - failed"
else
	grep -q "$samples samples written to $tmp/pipe.data, $samples decoded" "$out" ||
		fail "inject -i -: not $samples samples decoded"
	same_branches "inject -i -" "$data" "$tmp/pipe.data" 64
	perf report --header-only -i "$tmp/pipe.data" > "$out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "inject -i -: perf report --header-only exits $rc"
	grep -q '^# cpuid : ' "$out" || fail "inject -i -: no cpuid in the header"
	grep -q '^# contains samples with branch stack' "$out" ||
		fail "inject -i -: no BRANCH_STACK feature"
fi
perf record -o - -e cpu-clock -- true 2> /dev/null |
	perf auxsample inject -i - -o "$tmp/error.data" > "$out" 2>&1
rc=$?
killed $rc && fail "inject -i - without AUX samples: killed by signal $((rc - 128))"
[ $rc -ne 0 ] || fail "inject -i - without AUX samples: accepted"
grep -q 'has no AUX area samples: record with perf record -A' "$out" ||
	fail "inject -i - without AUX samples: no clear error"
[ -e "$tmp/error.data" ] && fail "inject -i - without AUX samples: output left behind"

# Decoding threads change nothing: the same events, in the same order.
for j in 1 3; do
	perf auxsample inject -j $j -i "$data" -o "$tmp/j$j.data" > "$out" 2>&1 ||
		fail "inject -j $j failed"
	perf script -F ip,brstack -i "$tmp/j$j.data" > "$tmp/j$j.brstack" 2> /dev/null
	perf report -D -i "$tmp/j$j.data" 2> /dev/null | grep -o 'PERF_RECORD_[A-Z_0-9]*' \
		> "$tmp/j$j.records"
done
cmp -s "$tmp/j1.brstack" "$tmp/j3.brstack" || fail "inject -j 3: other branch stacks than -j 1"
cmp -s "$tmp/j1.records" "$tmp/j3.records" || fail "inject -j 3: other events, or in another order"

# perf auxsample script -F prints a sample as stock perf script -F prints
# the injected one: perf script's own formatting is the reference, byte
# for byte, with the symbols, the comm and perf's branch types.
for fields in ip,brstack pid,tid,ip,brstacksym comm,cpu,ip,brstack; do
	perf auxsample script -F "$fields" -i "$data" > "$tmp/fields" 2> "$out"
	rc=$?
	killed $rc && fail "script -F $fields: killed by signal $((rc - 128))"
	[ $rc -eq 0 ] || fail "script -F $fields: exit $rc"
	perf script -F "$fields" -i "$injected" > "$tmp/fields.stock" 2> /dev/null
	[ "$(wc -l < "$tmp/fields.stock")" = "$samples" ] ||
		fail "perf script -F $fields: not $samples samples"
	cmp -s "$tmp/fields" "$tmp/fields.stock" ||
		fail "script -F $fields: not what perf script -F $fields prints of the injected file"
done
perf auxsample script -F ip,period -i "$data" > "$out" 2>&1
rc=$?
[ $rc -ne 0 ] || fail "script -F ip,period: accepted"
grep -q "'period' is not a field it prints" "$out" || fail "script -F ip,period: no clear error"
perf auxsample script -F ip --json -i "$data" > "$out" 2>&1
[ $? -ne 0 ] || fail "script -F ip --json: accepted"
grep -q -- '-F is an output of perf auxsample script' "$out" || fail "script -F --json: no clear error"
# A field the samples lack is refused, as perf script refuses it.
if perf auxsample simulate -o "$tmp/nocpu.data" --no-sample-cpu -c 700 -- "$wl" branches 40 \
	> /dev/null 2>&1; then
	perf auxsample script -F cpu,ip -i "$tmp/nocpu.data" > "$out" 2>&1
	rc=$?
	killed $rc && fail "script -F cpu of samples without one: killed by signal $((rc - 128))"
	[ $rc -ne 0 ] || fail "script -F cpu of samples without one: accepted"
	grep -q 'do not have CPU attribute set' "$out" ||
		fail "script -F cpu of samples without one: no clear error"
else
	fail "simulate --no-sample-cpu failed"
fi

# The attrs: branch stacks with hw_idx, no AUX samples.
perf evlist -v -i "$injected" > "$out" 2>&1
grep '^instructions:u:' "$out" > "$tmp/attr"
grep -q 'sample_type: [A-Z|]*BRANCH_STACK' "$tmp/attr" ||
	fail "evlist: no BRANCH_STACK in sample_type"
grep -q 'branch_sample_type: [A-Z_|]*HW_INDEX' "$tmp/attr" ||
	fail "evlist: no HW_INDEX in branch_sample_type"
grep -q 'AUX\|aux_sample_size' "$tmp/attr" && fail "evlist: AUX samples are left"
grep -q CALLCHAIN "$tmp/attr" && fail "evlist: a call chain without -g"
perf report --header-only -i "$injected" > "$out" 2>&1
grep -q '^# contains samples with branch stack' "$out" || fail "header: no BRANCH_STACK feature"

# The events: the same samples and sideband, no AUX area events.
count_records "$data" > "$tmp/records.in"
count_records "$injected" > "$tmp/records.out"
grep -v 'AUXTRACE\|ITRACE_START\|PERF_RECORD_AUX$' "$tmp/records.in" > "$tmp/records.want"
diff "$tmp/records.want" "$tmp/records.out" > "$out" ||
	fail "report -D: other events than the input's"
grep -q AUXTRACE_INFO "$tmp/records.in" || fail "report -D: the input has no AUXTRACE_INFO"
perf report -D -i "$injected" > "$out" 2>&1
[ "$(grep -c '\.\.\. branch stack: nr:' "$out")" = "$samples" ] ||
	fail "report -D: not $samples branch stacks"
grep -q 'AUX size\|PERF_RECORD_AUX' "$out" && fail "report -D: AUX data is left"

# perf report -b on it is branch mode with every branch, as it is on the input.
branches=$(awk '{ n += NF - 1 } END { print n }' "$tmp/brstack")
perf script -i "$injected" -F ip,brstack > "$tmp/brstack.full" 2> /dev/null
perf report -b --stdio -i "$injected" > "$out" 2>&1 || fail "report -b failed"
grep -q "^# Event count (approx.): $branches\$" "$out" || fail "report -b: not $branches branches"
grep -q 'Source Symbol.*Target Symbol' "$out" || fail "report -b: not in branch mode"
grep -q '\[\.\] fib  *\[\.\] fib' "$out" || fail "report -b: no branches in fib"
perf report --stdio -i "$data" 2> /dev/null | grep -v '^#' > "$tmp/report.in"
perf report --stdio -i "$injected" 2> /dev/null | grep -v '^#' > "$tmp/report.out"
diff "$tmp/report.in" "$tmp/report.out" > "$out" ||
	fail "report: injected output differs from the input's"

# Older perf (Debian 12's perf 6.1, package linux-perf) reads what inject
# and simulate write: their attrs are no larger than their fields need,
# and the stock tools run whichever perf is on PATH.
old_perf=${AUXSAMPLE_OLD_PERF:-/usr/bin/perf}
if [ -x "$old_perf" ] && [ "$("$old_perf" --version)" != "$(perf --version)" ]; then
	old_version=$("$old_perf" --version)
	perf evlist -v -i "$injected" | grep -q 'size: 136' &&
		fail "inject: attrs of 136 bytes (config3)"
	if ! "$old_perf" script -i "$injected" -F ip,brstack > "$tmp/old.brstack" 2> "$out"; then
		fail "$old_version: perf script -F ip,brstack cannot read the injected file"
	else
		# The same IPs and branches; newer perf adds fields to each entry.
		brstack_from_to "$tmp/old.brstack" > "$tmp/old.cut"
		brstack_from_to "$tmp/brstack.full" > "$tmp/new.cut"
		cmp -s "$tmp/old.cut" "$tmp/new.cut" ||
			fail "$old_version: other branch stacks than perf script shows"
		nr=$(wc -l < "$tmp/old.cut")
		echo "$old_version: perf script -F ip,brstack: $nr samples, the same branches"
	fi
	"$old_perf" report -b --stdio -i "$injected" > "$out" 2>&1 ||
		fail "$old_version: perf report -b cannot read the injected file"
	grep -q "^# Event count (approx.): $branches\$" "$out" ||
		fail "$old_version: perf report -b: not $branches branches"
	"$old_perf" report --stdio -i "$data" > "$out" 2>&1 ||
		fail "$old_version: perf report cannot read perf auxsample simulate's file"
else
	echo "no older perf at $old_perf (Debian's linux-perf): not checked"
fi

# Cycles: none without CYC packets (perf shows '-'), and with them (--cyc)
# each entry's cycles since the branch before it, as LBR counts them:
# the simulator's clock gives each instruction the same cycles, so they go
# with the instructions run between the two branches; perf report -b
# then shows IPC, and --total-cycles the cycles of basic blocks.
awk '{
	for (i = 2; i <= NF; i++) {
		split($i, f, "/")
		if (f[6] != 0)
			exit 1
	}
}' "$tmp/brstack.full" ||
	fail "cycles in the virtual LBR of a trace without CYC packets"
perf auxsample simulate -o "$tmp/cyc.data" --mtc --cyc -c 700 -- "$wl" branches 40 \
	> /dev/null 2>&1 ||
	fail "simulate --mtc --cyc failed"
perf auxsample inject -i "$tmp/cyc.data" -o "$tmp/cyc-out.data" > "$out" 2>&1 ||
	fail "inject --cyc failed"
perf script -i "$tmp/cyc-out.data" -F ip,brstack > "$tmp/cyc.brstack" 2> /dev/null
python3 "$(dirname "$0")"/lib/auxsample_cycles.py "$wl" "$tmp/cyc.brstack" 3 > "$out" 2>&1 ||
	fail "cycles: not those of the instructions run"
echo "cycles: $(cat "$out")"
perf report -b --stdio -s symbol_from,symbol_to,cycles -i "$tmp/cyc-out.data" > "$out" 2>&1
grep -q '^#.*Basic Block Cycles  *IPC' "$out" &&
	grep -q ' [0-9][0-9]*  *[0-9]*\.[0-9][0-9]  *\[ *[0-9.]*%\]' "$out" ||
	fail "cycles: perf report -b shows no block cycles and IPC"
perf report --total-cycles --stdio -i "$tmp/cyc-out.data" > "$out" 2>&1
grep -q '^#.*Avg Cycles' "$out" && grep -v '^#' "$out" | grep -q '\[.* -> .*\]' ||
	fail "cycles: perf report --total-cycles shows no block cycles"

# --depth: shorter stacks, still the decoder's.
perf auxsample inject -i "$data" -o "$tmp/depth.data" --depth 16 > "$out" 2>&1 ||
	fail "inject --depth 16 failed"
same_branches "--depth 16" "$data" "$tmp/depth.data" 16

# -g: the call chains perf report shows on the input.
perf auxsample inject -g -i "$data" -o "$tmp/callchain.data" > "$out" 2>&1 ||
	fail "inject -g failed"
perf evlist -v -i "$tmp/callchain.data" | grep '^instructions:u:' > "$out"
grep -q 'sample_type: [A-Z|]*CALLCHAIN' "$out" || fail "-g: no CALLCHAIN in sample_type"
perf report --stdio --no-children --no-branch-stack -i "$data" 2> /dev/null |
	grep -v '^#' > "$tmp/report.in"
perf report --stdio --no-children --no-branch-stack -i "$tmp/callchain.data" 2> /dev/null |
	grep -v '^#' > "$tmp/report.out"
diff "$tmp/report.in" "$tmp/report.out" > "$out" || fail "-g: call graphs differ from the input's"
grep -q -- '--branches$' "$tmp/report.out" || fail "-g: fib not called from branches"
# -G: one line per sample, as without call chains.
same_branches "-g" "$data" "$tmp/callchain.data" 64 -G

# Snippets without a sync point keep their place with an empty branch
# stack.  (Under 512 bytes they make no streams, which would know the
# state from the snippets before them.)
perf auxsample simulate -o "$tmp/small.data" --no-tsc --aux-sample-size 256 -c 700 -- \
	"$wl" branches 40 > /dev/null 2>&1 || fail "simulate --aux-sample-size 256 failed"
small=$(auxsample_sim_samples "$tmp/small.data.truth")
nosync=$(perf auxsample script -i "$tmp/small.data" 2>&1 > /dev/null |
	 sed -n 's/.* \([0-9]*\) without a sync point.*/\1/p')
perf auxsample inject -i "$tmp/small.data" -o "$tmp/small-out.data" > "$out" 2>&1 ||
	fail "inject with snippets without a sync point failed"
grep -q "$small samples written to .*, $((small - nosync)) decoded, $nosync failed" "$out" ||
	fail "not $nosync of $small samples failed"
[ "${nosync:-0}" -gt 0 ] || fail "no snippet without a sync point: the test tests nothing"
same_branches "no sync point" "$tmp/small.data" "$tmp/small-out.data" 64
[ "$(awk 'NF == 1' "$tmp/brstack" | wc -l)" = "$nosync" ] ||
	fail "not $nosync samples with an empty branch stack"

# Errors: a message, a non-zero exit and no output left behind.
# expect_error WHAT MESSAGE ARGS...
expect_error() {
	local what=$1 message=$2 rc

	shift 2
	rm -f "$tmp/error.data"
	perf auxsample inject "$@" > "$out" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		fail "$what: accepted"
		return
	fi
	killed $rc && fail "$what: killed by signal $((rc - 128))"
	grep -q -- "$message" "$out" || fail "$what: no '$message'"
	[ -e "$tmp/error.data" ] && fail "$what: output left behind"
	echo "$what: $(head -1 "$out")"
}

expect_error "no input" "failed to open $tmp/none.data: No such file" \
	-i "$tmp/none.data" -o "$tmp/error.data"
perf record -o "$tmp/plain.data" -e cpu-clock -- true > /dev/null 2>&1
expect_error "no AUX samples" "has no AUX area samples: record with perf record -A" \
	-i "$tmp/plain.data" -o "$tmp/error.data"
head -c $(($(stat -c %s "$data") / 2)) "$data" > "$tmp/truncated.data"
expect_error "truncated input" "truncated.data is truncated" \
	-i "$tmp/truncated.data" -o "$tmp/error.data"
expect_error "no -o" "no output file: give it with -o" -i "$data"
expect_error "--depth 0" "depth must be at least 1" -i "$data" -o "$tmp/error.data" --depth 0
expect_error "output is the input" "is the input" -f -i "$data" -o "$data"
perf auxsample simulate -o "$tmp/tiny.data" --no-tsc --aux-sample-size 16 -c 700 -- \
	"$wl" branches 10 > /dev/null 2>&1
expect_error "nothing decodable" "none of the .* AUX samples of .* decoded" \
	-i "$tmp/tiny.data" -o "$tmp/error.data"
echo existing > "$tmp/exists.data"
perf auxsample inject -i "$data" -o "$tmp/exists.data" > "$out" 2>&1
rc=$?
[ $rc -ne 0 ] || fail "an existing output was overwritten without -f"
killed $rc && fail "existing output: killed by signal $((rc - 128))"
grep -q "exists.data exists: use -f to overwrite it" "$out" ||
	fail "no clear error for an existing output"
[ "$(cat "$tmp/exists.data")" = existing ] || fail "an existing output was changed"
perf auxsample inject -f -i "$data" -o "$tmp/exists.data" > "$out" 2>&1 ||
	fail "-f did not overwrite"
[ -e "$tmp/exists.data.old" ] && fail "-f left a .old file"
same_branches "-f" "$data" "$tmp/exists.data" 64
exit $err
