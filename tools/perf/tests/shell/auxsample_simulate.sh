#!/bin/bash
# perf auxsample simulate against perf's own Intel PT decoder
# SPDX-License-Identifier: GPL-2.0
#
# Simulated Intel PT sample-mode recordings of small programs: perf's own
# decoder must read every sample without an error, and its virtual LBR
# (--itrace=L) must be the true branches the simulator wrote beside them;
# so must the virtual LBR of perf auxsample script (libauxsample), exactly.

set -u

# shellcheck source=lib/auxsample_sim.sh
. "$(dirname "$0")"/lib/auxsample_sim.sh
auxsample_sim_check

err=0
lib=$(dirname "$0")/lib
tmp=$(mktemp -d /tmp/__perf_test.auxsample_simulate.XXXXX)
data=$tmp/perf.data
out=$tmp/out
auxsample_test_traps

auxsample_sim_workload "$tmp/workload" "$out"

# check WHAT SIMULATE-OPTIONS -- COMMAND: decoded without errors, as the truth says.
# With PADVAR set in the environment, the program runs with it.
check() {
	local what=$1

	shift
	if ! perf auxsample simulate -o "$data" "$@" > "$out" 2>&1; then
		fail "$what: simulate failed"
		return
	fi
	auxsample_sim_decodes "$what" "$data" || return
	if ! python3 "$lib/auxsample_truth.py" "$data" 64 perf > "$out" 2>&1; then
		fail "$what: perf's virtual LBR is not the truth"
		return
	fi
	echo "$what: perf: $(cat "$out")"
	if ! python3 "$lib/auxsample_truth.py" --auxsample "$data" 64 perf > "$out" 2>&1; then
		fail "$what: perf auxsample script's virtual LBR is not the truth"
		return
	fi
	echo "$what: perf auxsample script: $(cat "$out")"
}

wl=$tmp/workload
# At perf record -Aintel_pt's timing (TSC, MTC), as the tests of perf's
# timed decoding need it: each sample's branches end at its time.
check "branches, calls, jump table, recursion" -c 700 -- "$wl" branches 40
check "setjmp/longjmp" -c 700 -- "$wl" longjmp 20
check "signal handler" -c 700 -- "$wl" signal 20
check "syscall loop" -c 700 -- "$wl" syscalls 40
check "two threads" -c 700 -- "$wl" threads 20
check "no return compression" --noretcomp -c 700 -- "$wl" branches 40
check "PSB every 512 bytes, 8K samples" --psb-period 512 --aux-sample-size 8K \
	-c 700 -- "$wl" branches 40
check "dynamically linked /bin/true" -c 3000 -- /bin/true
check "timeless" --no-tsc -c 700 -- "$wl" branches 40
check "timeless signal handler" --no-tsc -c 700 -- "$wl" signal 20
check "timed, MTC and CYC" --mtc --cyc -c 700 -- "$wl" branches 40

# A period that ends on a syscall: its PMI is taken in the kernel, and the
# sample's IP is there (perf_instruction_pointer() of the interrupted
# registers); the syscall is its newest branch.  A short period makes
# some samples land so, wherever the environment puts the code's start.
for w in syscalls signal; do
	check "periods ending on syscalls, $w" -c 97 -- "$wl" $w 100
	python3 "$lib/auxsample_truth.py" --dump "$data.truth" |
		grep -q '^sample .* ip 0xffffffff82000040$' ||
		fail "periods ending on syscalls, $w: no sample taken in the kernel"
	perf script -i "$data" -F ip,sym > "$out" 2>&1
	grep -q 'ffffffff82000040' "$out" || fail "$w: perf script shows no kernel sample IP"
done

# Where samples land depends on how many instructions the start-up code
# runs, which depends on the size of the environment: the same checks
# with it larger.
for pad in 40 300 4096; do
	padding=$(head -c $pad /dev/zero | tr '\0' x)
	PADVAR=$padding check "signal handler, environment +$pad bytes" -c 700 -- "$wl" signal 20
	PADVAR=$padding check "two threads, environment +$pad bytes" -c 700 -- "$wl" threads 20
done

# Which branches are each sample's, timing by timing: the newest 16 of
# perf's own decoder (trace begins and ends left out) and of perf
# auxsample script are the truth's, for every sample.
for timing in "" --no-mtc "--mtc --cyc" --no-tsc "--mtc-period 0" "--mtc-period 9"; do
	# shellcheck disable=SC2086
	if ! perf auxsample simulate -o "$data" $timing -c 1000 -- "$wl" branches 40 \
		> "$out" 2>&1; then
		fail "timing ${timing:-default}: simulate failed"
		continue
	fi
	python3 "$lib/auxsample_truth.py" --exact "$data" 16 perf > "$out" 2>&1 ||
		fail "timing ${timing:-default}: perf's decoder does not end at the sample"
	echo "timing ${timing:-default}: perf: $(head -1 "$out")"
	python3 "$lib/auxsample_truth.py" --exact --auxsample "$data" 16 perf > "$out" 2>&1 ||
		fail "timing ${timing:-default}: perf auxsample script does not end at the sample"
done
perf auxsample simulate -o "$data" --mtc-period 4 -- "$wl" branches 1 > "$out" 2>&1
rc=$?
[ $rc -ne 0 ] && ! killed $rc && grep -q 'valid values are 0,3,6,9' "$out" ||
	fail "--mtc-period 4: not refused as the CPU's caps/mtc_periods would (exit $rc)"

# The timing packets are there.
perf auxsample simulate -o "$data" --mtc --cyc -c 700 -- "$wl" branches 10 > /dev/null 2>&1
perf report -D -i "$data" > "$out" 2>&1
for packet in 'TMA CTC' MTC CBR CYC; do
	grep -q " $packet " "$out" || fail "--mtc --cyc: no $packet packet"
done

# Deep virtual LBRs: 1024 branches where the snippet holds them.
perf auxsample simulate -o "$data" --no-tsc -c 700 -- "$wl" branches 40 > /dev/null 2>&1
python3 "$lib/auxsample_truth.py" --auxsample "$data" 1024 perf > "$out" 2>&1 ||
	fail "depth 1024: perf auxsample script's virtual LBR is not the truth"

# perf auxsample script --json: one valid object per sample, branches as in text.
perf auxsample simulate -o "$data" --no-tsc -c 700 -- "$wl" branches 20 > /dev/null 2>&1
perf auxsample script -i "$data" --json > "$tmp/json" 2> /dev/null
perf auxsample script -i "$data" > "$tmp/text" 2> /dev/null
nr=$(auxsample_sim_samples "$data.truth")
python3 - "$tmp/json" "$tmp/text" "$nr" > "$out" 2>&1 <<'PY' || fail "script --json"
import json, sys
objs = [json.loads(line) for line in open(sys.argv[1])]
text = [l.split() for l in open(sys.argv[2]) if l.startswith('\tbranch')]
truth = int(sys.argv[3])
assert len(objs) == truth, (len(objs), truth)
froms = [int(b['from'], 16) for o in objs for b in o['branches']]
assert froms == [int(t[1], 16) for t in text], 'json and text differ'
PY
# Names as the system has them: UTF-8 kept, control characters escaped.
odd=$(printf 'w\303\266rk\001')
cp "$tmp/workload" "$tmp/$odd"
perf auxsample simulate -o "$tmp/odd.data" -c 3000 -- "$tmp/$odd" branches 2 > /dev/null 2>&1
perf auxsample script -i "$tmp/odd.data" --json 2> /dev/null |
python3 -c '
import json, sys
objs = [json.loads(line) for line in sys.stdin]
assert objs and all(o["comm"] == "w\u00f6rk\u0001" for o in objs), objs[:1]
assert all(o["dso"] is None or o["dso"].endswith("/w\u00f6rk\u0001") for o in objs)
' > "$out" 2>&1 || fail "script --json: a comm of UTF-8 and a control character"

# perf report shows the virtual LBR as branch data: as many branches as
# perf auxsample script decodes, the same count as perf's own --itrace=L64.
perf auxsample simulate -o "$data" --no-tsc -c 700 -- "$wl" branches 40 > /dev/null 2>&1
branches=$(perf auxsample script -i "$data" 2>&1 >/dev/null |
	   sed -n 's/.* AUX samples, \([0-9]*\) branches.*/\1/p')
perf report -i "$data" --stdio > "$out" 2>&1
grep -q "^# Event count (approx.): $branches\$" "$out" ||
	fail "report: not $branches virtual LBR branches"
grep -q 'Source Symbol.*Target Symbol' "$out" || fail "report: not in branch mode"
grep -q '\[\.\] fib  *\[\.\] ' "$out" || fail "report: no branches from fib"
perf report -i "$data" --stdio --itrace=L64 > "$out" 2>&1
grep -q "^# Event count (approx.): $branches\$" "$out" ||
	fail "report --itrace=L64: not $branches branches"
perf report -i "$data" --stdio --virtual-lbr 0 > "$out" 2>&1
grep -q 'Source Symbol' "$out" && fail "report --virtual-lbr 0: still in branch mode"
perf report -i "$data" --stdio --branch-history > "$out" 2>&1
grep -q 'COND_BWD' "$out" || fail "report --branch-history: no branch flags"
# The call chains that the snippets show: fib called from branches from main.
perf report -i "$data" --stdio --no-branch-stack --no-children > "$out" 2>&1
awk '/\[\.\] fib$/ { p = 1; next } p && /^ +[0-9.]+%/ { exit } p' "$out" > "$tmp/fib"
grep -q 'branches$' "$tmp/fib" || fail "report -g: fib not called from branches"
grep -q ' main$' "$tmp/fib" || fail "report -g: branches not called from main"

# perf auxsample stat: dense samples overlap, and every one is counted.
perf auxsample simulate -o "$data" --no-tsc -c 100 -- "$wl" branches 10 > /dev/null 2>&1
perf auxsample stat -i "$data" > "$out" 2>&1
samples=$(auxsample_sim_samples "$data.truth")
grep -q "^ *$samples  AUX samples" "$out" || fail "stat: not $samples AUX samples"
grep -q '^ *0  decode errors' "$out" || fail "stat: decode errors"
overlap=$(sed -n 's/.*overlapping the CPU.s previous snippet (\([0-9]*\).*/\1/p' "$out")
[ "${overlap:-0}" -ge 90 ] || fail "stat: dense snippets overlap by only ${overlap:-0}%"

# Dense samples are decoded as streams, each byte once: the same true
# branches inline and in threads, the same branches as each snippet decoded
# alone (--no-reuse), whose call chains may only be shorter.
perf auxsample script -i "$data" -v -j 1 > "$tmp/stream" 2> "$out"
grep -q 'auxsample streams: [1-9][0-9]* samples decoded from them' "$out" ||
	fail "dense: not decoded as streams"
for j in 1 2 3; do
	python3 "$lib/auxsample_truth.py" --auxsample "$data" 64 perf -j $j > "$out" 2>&1 ||
		fail "dense, streams, -j $j: not the truth"
done
# -v says what decoding walked and cost: the walker walks the branches
# libipt does, streams and snippets alone.
walked() {
	local cost='.*decoding: \([0-9]*\) taken branches walked (.*) in \([0-9.]*\) s:.*'

	perf auxsample script -i "$data" -v -j 1 "$@" 2>&1 > /dev/null |
		sed -n "s/$cost/\1 \2/p"
}
for reuse in --reuse --no-reuse; do
	w=$(walked $reuse --decoder=walker)
	l=$(walked $reuse --decoder=libipt)
	[ -n "$w" ] && [ "${w%% *}" = "${l%% *}" ] && [ "${w%% *}" -gt 0 ] ||
		fail "-v $reuse: the walker walked '$w' (branches, s), libipt '$l'"
done
# ... and how many decodes the walker skimmed, snippets of 64 branches
# and more, and walked again whole (libipt skims none).
skims() {
	local line='.*the walker skimmed \([0-9]*\) decodes, walked \([0-9]*\) of them.*'

	perf auxsample script -i "$data" -v -j 1 --no-reuse "$@" 2>&1 > /dev/null |
		sed -n "s/$line/\1 \2/p"
}
sk=$(skims --decoder=walker)
[ -n "$sk" ] && [ "${sk%% *}" -gt 0 ] && [ "${sk##* }" -le "${sk%% *}" ] ||
	fail "-v --no-reuse: the walker's skims '$sk' (skimmed, walked again)"
[ -z "$(skims --decoder=libipt)" ] || fail "-v: libipt said it skimmed"
perf auxsample script -i "$data" -j 3 > "$tmp/stream3" 2> /dev/null
cmp -s "$tmp/stream" "$tmp/stream3" || fail "dense: streams decoded in threads differ"
perf auxsample script -i "$data" -j 1 --no-reuse > "$tmp/alone" 2> /dev/null
grep -v caller "$tmp/stream" > "$tmp/stream.br"
grep -v caller "$tmp/alone" > "$tmp/alone.br"
cmp -s "$tmp/stream.br" "$tmp/alone.br" || fail "dense: streams and --no-reuse give other branches"
[ "$(grep -c caller "$tmp/stream")" -ge "$(grep -c caller "$tmp/alone")" ] ||
	fail "dense: streams know fewer callers than snippets alone"
# A pipe (perf record -o -): the same samples, decoded each alone.
perf inject -i "$data" -o - 2> /dev/null | perf auxsample script -i - > "$tmp/pipe" 2> "$out" ||
	fail "script of a pipe failed"
cmp -s "$tmp/pipe" "$tmp/alone" || fail "script of a pipe: not the file's samples"

# What -v says of @1's streams: the samples they held ($in) and those
# decoded from them ($from).
stream_counts() {
	perf auxsample script -i "$1" -v -j 1 > /dev/null 2> "$out"
	in=$(sed -n 's/^auxsample streams: \([0-9]*\) samples in .*/\1/p' "$out")
	from=$(sed -n 's/^auxsample streams: \([0-9]*\) samples decoded from them.*/\1/p' "$out")
}
# @1's streams (@2 in failures): the truth's branches and callers with
# -j 1 and -j 2, and the walker's JSON libipt's.
streams_true() {
	local j decoder

	for j in 1 2; do
		python3 "$lib/auxsample_truth.py" --auxsample --callers "$1" 64 perf -j $j \
			> "$out" 2>&1 || fail "$2, streams, -j $j: not the truth"
	done
	for decoder in walker libipt; do
		perf auxsample script -i "$1" -j 1 --json --decoder=$decoder \
			> "$tmp/json.$decoder" 2> /dev/null
	done
	cmp -s "$tmp/json.walker" "$tmp/json.libipt" ||
		fail "$2: the walker's streams are not libipt's"
}

# A process that maps more code as it runs: its stream's decoder moves to
# the image of the new maps at the next sample, with the callers it knew
# (it began again there before c4b3797: 419 callers, now 442).  The
# samples after the last mapping were decoded alone before 754227d (127
# of 150 samples from the stream, the 23 after it alone); a few may
# still be, whose snippet does not end where the trace stopped.  The
# branches and the callers are the truth's, with -j 2 too, walker and
# libipt alike.
if perf auxsample simulate -o "$tmp/maps.data" -c 300 -- "$wl" mmaps 40 > "$out" 2>&1; then
	after=$(perf script -i "$tmp/maps.data" --show-mmap-events -F event 2> /dev/null |
		awk '/PERF_RECORD_MMAP/ { n = 0 } /instructions/ { n++ } END { print n }')
	stream_counts "$tmp/maps.data"
	[ "${after:-0}" -ge 10 ] && [ "${in:-0}" -gt "$after" ] &&
		[ $((${in:-0} - ${from:-0})) -le $((after / 4)) ] ||
		fail "new maps: ${from:-?} of ${in:-?} stream samples from their stream, ${after:-?} after the last mapping"
	streams_true "$tmp/maps.data" "new maps"
else
	fail "new maps: simulate failed"
fi

# A process that maps two files at one address in turn, and calls their
# code: the simulator writes an MMAP2 for each mmap(), as the kernel does
# (it wrote only the first of each file before, and decoding then read
# the other file's code there), and the image of the process perf
# auxsample decodes with drops each file the other is mapped over
# (auxsample_image__copy()).  perf's own decoder is left out: it loses
# the trace at the first call into a file mapped a few instructions
# before, its time estimate for the call still before the MMAP2's.
if perf auxsample simulate -o "$tmp/files.data" -c 3000 -- "$wl" files 12 "$tmp" \
	> "$out" 2>&1; then
	n=$(perf script -i "$tmp/files.data" --show-mmap-events 2> /dev/null |
		grep -c 'PERF_RECORD_MMAP2.*/code[01]\.bin$')
	[ "$n" = 12 ] || fail "files: $n MMAP2 records of the 12 mmap()s of files"
	streams_true "$tmp/files.data" "files mapped in turn at one address"
else
	fail "files: simulate failed"
fi

# A process that exec()s keeps its AUX buffer: on hardware its stream
# goes on into the new program, whose callers are none of the old one's.
# The simulator begins a new stream at an exec, so one is spliced in: a
# COMM exec and the program's MMAP2 again, between the 40th and 41st
# samples of a stream.  Up to it the samples must be those of the file
# without it; from there those of a stream that begins at the 41st (the
# samples before it taken out), not those of the stream that knew main's
# callers.  The reference is perf auxsample's own start of a stream, and
# the program mapped again is the same: this tests where the stream
# begins again, not the image it then decodes with.
at=40
# the samples of @1 decoded with -j @2, after the $at-th (@3: -gt) or up to it (-le)
exec_samples() {
	perf auxsample script -i "$1" -j "$2" 2> /dev/null |
		awk -v at=$at -v op="$3" '/^[^\t]/ { n++ } op == "-gt" ? n > at : n <= at'
}
# @1 and @2 differ: what differs, for the failure
exec_differ() {
	! cmp -s "$1" "$2" && diff "$1" "$2" | head -20 > "$out"
}
# Whether the command after @1 prints @1 (a file) again; what differs in $out if not.
same_again() {
	local ref=$1

	shift
	"$@" > "$tmp/again" 2> /dev/null
	! exec_differ "$tmp/again" "$ref"
}
if perf auxsample simulate -o "$tmp/one.data" -c 5000 -- "$wl" branches 3000 > "$out" 2>&1 &&
	python3 "$lib/auxsample_splice.py" exec "$tmp/one.data" "$tmp/exec.data" $at > "$out" 2>&1 &&
	python3 "$lib/auxsample_splice.py" drop "$tmp/one.data" "$tmp/from.data" $at > "$out" 2>&1; then
	stream_counts "$tmp/one.data"
	one_from=$from
	stream_counts "$tmp/exec.data"
	[ "${in:-0}" -gt $((at + 1)) ] && [ "${from:-0}" = "${one_from:-1}" ] ||
		fail "exec: ${from:-?} of ${in:-?} samples from streams, ${one_from:-?} without it"
	for j in 1 2; do
		exec_samples "$tmp/exec.data" $j -le > "$tmp/exec.out"
		exec_samples "$tmp/one.data" $j -le > "$tmp/one.out"
		exec_differ "$tmp/exec.out" "$tmp/one.out" &&
			fail "exec, -j $j: the samples before it are not those without it"
		exec_samples "$tmp/exec.data" $j -gt > "$tmp/exec.out"
		exec_samples "$tmp/one.data" $j -gt > "$tmp/one.out"
		perf auxsample script -i "$tmp/from.data" -j $j > "$tmp/from.out" 2> /dev/null
		if [ ! -s "$tmp/exec.out" ] || exec_differ "$tmp/exec.out" "$tmp/from.out"; then
			fail "exec, -j $j: the stream did not begin again at the exec"
		fi
		cmp -s "$tmp/exec.out" "$tmp/one.out" &&
			fail "exec, -j $j: the samples after it are those of the stream without it"
	done
else
	fail "exec: simulate or splice failed"
fi

# A crafted file: MMAP2 events of another program over the workload,
# their pid field a process that does not exist, their tid the
# workload's.  perf applies them to the tid's process, so the samples of
# it that threads still decode must be delivered before each: -j 2 and
# -j 3 give -j 1's output, run after run (before, 2 runs of 6 differed).
# Each snippet alone, as jobs of the threads, not streams.
if [ -x /bin/true ] &&
	python3 "$lib/auxsample_splice.py" remap "$tmp/one.data" "$tmp/remap.data" 99999 /bin/true \
		> "$out" 2>&1; then
	perf auxsample script -i "$tmp/remap.data" --no-reuse -j 1 > "$tmp/remap.1" 2> /dev/null
	for j in 2 2 2 2 2 2 2 2 2 2 3 3; do
		same_again "$tmp/remap.1" perf auxsample script -i "$tmp/remap.data" --no-reuse -j $j ||
			{ fail "maps of a crafted pid: -j $j is not -j 1"; break; }
	done
else
	fail "remap: splice failed"
fi

# The program mapped again, another inode each time, after every other
# sample: dsos of one name, whose hot paths tie but for the dso.  perf
# auxsample report orders them by what tells the dsos apart, the same
# every run (before, 10 runs gave 10 orders).
pid=$(perf script -i "$tmp/one.data" -F pid 2> /dev/null | head -1 | tr -d ' ')
if python3 "$lib/auxsample_splice.py" remap "$tmp/one.data" "$tmp/reino.data" "$pid" "$wl" \
		> "$out" 2>&1; then
	perf auxsample report -i "$tmp/reino.data" > "$tmp/reino.1" 2> /dev/null
	[ -s "$tmp/reino.1" ] || fail "dsos of one name: no report"
	for _ in 1 2 3 4 5; do
		same_again "$tmp/reino.1" perf auxsample report -i "$tmp/reino.data" || {
			fail "dsos of one name: perf auxsample report's order changes from run to run"
			break
		}
	done
else
	fail "remap of the program: splice failed"
fi

# A crafted MMAP2 below the program whose end wraps past the top of
# memory, as the kernel never writes: perf kept it beside the program's
# map, over it, and c531876's image of the process put it after the
# program's, where libipt decoded the other file.  perf now skips it
# (patch 0060), and an image whose files overlap is made from scratch
# (55ea7de): either keeps the output that of the file without it.
if python3 "$lib/auxsample_splice.py" wrap "$tmp/one.data" "$tmp/wrap.data" 11 /bin/true \
		> "$out" 2>&1; then
	for decoder in walker libipt; do
		perf auxsample script -i "$tmp/one.data" --decoder=$decoder > "$tmp/wrap.0" 2>&1
		perf auxsample script -i "$tmp/wrap.data" --decoder=$decoder > "$tmp/wrap.1" 2>&1
		cmp -s "$tmp/wrap.0" "$tmp/wrap.1" ||
			fail "a map whose end wraps, $decoder: not the output without it"
	done
else
	fail "wrap: splice failed"
fi

# More processes at once than perf auxsample keeps images of
# (AUXSAMPLE_PROC_CACHE, 8): their samples interleave, and an image let
# go of is made again at the process's next sample.  A stream's decoder
# keeps its own, and moves only where the process mapped more:
# the streams' samples still come from them, with the truth's branches
# and callers, walker and libipt alike.
procs=""
for _ in $(seq 10); do
	procs="$procs \"$wl\" branches 300 &"
done
if perf auxsample simulate -o "$tmp/procs.data" -c 500 -- /bin/sh -c "$procs wait" \
	> "$out" 2>&1; then
	stream_counts "$tmp/procs.data"
	pids=$(perf script -i "$tmp/procs.data" -F pid 2> /dev/null | sort -u | wc -l)
	[ "$pids" -gt 8 ] && [ "${in:-0}" -ge 1000 ] &&
		[ $((${in:-0} - ${from:-0})) -le $((${in:-0} / 50)) ] ||
		fail "$pids processes: ${from:-?} of ${in:-?} stream samples from their stream"
	streams_true "$tmp/procs.data" "$pids processes"
else
	fail "ten processes: simulate failed"
fi

# Threads on CPUs of their own, their buffers filling up: snippets that
# grow, padded with zeros to 8 bytes, still make streams.
perf auxsample simulate -o "$tmp/threads.data" -c 150 -- "$wl" threads 20 > /dev/null 2>&1
perf auxsample script -i "$tmp/threads.data" -v > /dev/null 2> "$out"
grep -q 'auxsample streams: [1-9][0-9]* samples decoded from them' "$out" ||
	fail "threads: not decoded as streams"
python3 "$lib/auxsample_truth.py" --auxsample "$tmp/threads.data" 64 perf > "$out" 2>&1 ||
	fail "threads, streams: not the truth"
# Small snippets, many without a PSB of their own: decoded alone they give
# nothing, in a stream (which knows the state from the snippets before
# them) their true branches.
perf auxsample simulate -o "$tmp/small.data" --no-tsc --aux-sample-size 1K -c 700 -- \
	"$wl" branches 40 > /dev/null 2>&1
nosync_alone=$(perf auxsample script --no-reuse -i "$tmp/small.data" 2>&1 > /dev/null |
	       sed -n 's/.* \([0-9]*\) without a sync point.*/\1/p')
nosync=$(perf auxsample script -i "$tmp/small.data" 2>&1 > /dev/null |
	 sed -n 's/.* \([0-9]*\) without a sync point.*/\1/p')
[ "${nosync_alone:-0}" -gt 0 ] && [ "${nosync:-1}" -lt "$nosync_alone" ] ||
	fail "small snippets: ${nosync:-?} without a sync point streamed, ${nosync_alone:-?} alone"
python3 "$lib/auxsample_truth.py" --auxsample "$tmp/small.data" 64 perf > "$out" 2>&1 ||
	fail "small snippets, streams: not the truth"
echo "small snippets: $nosync_alone without a sync point alone, $nosync in streams: $(cat "$out")"
branches=$(grep -c '^.branch' "$tmp/stream")
perf report -i "$data" --stdio > "$out" 2>&1
grep -q "^# Event count (approx.): $branches\$" "$out" ||
	fail "dense report: not $branches branches"

# A file without AUX samples: a clear error.
perf record -o "$tmp/plain.data" -e cpu-clock -- true > /dev/null 2>&1
perf auxsample script -i "$tmp/plain.data" > "$out" 2>&1
rc=$?
[ $rc -ne 0 ] || fail "perf auxsample script accepted a file without AUX samples"
killed $rc && fail "a file without AUX samples: killed by signal $((rc - 128))"
grep -q "has no samples with AUX area data" "$out" ||
	fail "no clear error for a file without AUX samples"

# A program that exec()s itself maps its file where it was again: the
# simulator writes its MMAP2 again, as the kernel does (it wrote none
# after the exec before).
check "exec of itself" -c 3000 -- "$wl" exec 3 "$wl" branches 3
n=$(perf script -i "$data" --show-mmap-events 2> /dev/null | grep -c "PERF_RECORD_MMAP2.* $wl\$")
[ "$n" = 2 ] || fail "exec of itself: $n MMAP2 records of the program, not 2"

# A file cut short: perf report says so and fails, where perf's reader
# alone would fault on the missing bytes.
perf auxsample simulate -o "$data" --no-tsc -c 700 -- "$wl" branches 20 > /dev/null 2>&1
head -c $(($(stat -c %s "$data") * 2 / 3)) "$data" > "$tmp/cut.data"
perf report -i "$tmp/cut.data" --stdio > "$out" 2>&1
rc=$?
# Not 0, and not 129 to 192: killed by a signal.
[ $rc -ne 0 ] && { [ $rc -le 128 ] || [ $rc -gt 192 ]; } ||
	fail "report of a truncated file: exit $rc"
grep -q "cut.data is truncated: .* bytes where its header says" "$out" ||
	fail "report of a truncated file: no clear error"

# Bad input: a clear error, a non-zero exit and no output left behind.
perf auxsample simulate -o "$data" -- "$tmp/no-such-program" > "$out" 2>&1
rc=$?
[ $rc -ne 0 ] || fail "a program that does not exist was simulated"
killed $rc && fail "a program that does not exist: killed by signal $((rc - 128))"
grep -q "cannot run $tmp/no-such-program: No such file or directory" "$out" ||
	fail "no clear error for a missing program"
[ -e "$data" ] && fail "a partial perf.data was left"
[ -e "$data.truth" ] && fail "a partial ground truth was left"
exit $err
