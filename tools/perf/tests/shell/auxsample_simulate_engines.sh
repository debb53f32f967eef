#!/bin/bash
# perf auxsample simulate: the Valgrind engine against the ptrace engine
# SPDX-License-Identifier: GPL-2.0
#
# perf auxsample simulate has two engines: Valgrind (the default where it
# is installed) and ptrace single-stepping (the reference).  On each of the
# tests' workloads, the recordings of both decode to their own truth, and
# both engines took the same branches in the program's own code (its
# static binary loads at the same addresses under both; libc's branches
# are left out, as IFUNCs pick string functions by the CPU, which
# Valgrind simulates).  Then what only the Valgrind engine meets at
# scale: dynamic linking, fork and exec, and how it is asked for.

set -u

# shellcheck source=lib/auxsample_sim.sh
. "$(dirname "$0")"/lib/auxsample_sim.sh
auxsample_sim_check

# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
err=0
tmp=$(mktemp -d /tmp/__perf_test.auxsample_simulate_engines.XXXXX)
out=$tmp/out
data=$tmp/perf.data
lib=$(dirname "$0")/lib
auxsample_test_traps

# --engine takes ptrace or valgrind, and says so.
perf auxsample simulate --engine=qemu -o "$data" -- true > "$out" 2>&1
rc=$?
[ $rc -ne 0 ] && ! killed $rc && grep -q 'engine is ptrace or valgrind' "$out" ||
	fail "--engine=qemu: not refused (exit $rc)"

if ! perf auxsample simulate --engine=valgrind -o "$data" -- true > "$out" 2>&1; then
	grep -q -- '--engine=valgrind: .*install' "$out" ||
		fail "--engine=valgrind where it is missing: no message that says what to do"
	echo "Skip: no Valgrind engine: $(grep -o 'engine=valgrind: .*' "$out")"
	exit $((err ? 1 : 2))
fi
# Asked for where its tool is not: a message, nothing written.
rm -f "$data" "$data.truth"
PERF_AUXSAMPLE_VALGRIND_LIB=$tmp/none perf auxsample simulate --engine=valgrind \
	-o "$data" -- true > "$out" 2>&1
rc=$?
[ $rc -ne 0 ] && ! killed $rc && grep -q 'built without its Valgrind tool' "$out" ||
	fail "--engine=valgrind without its tool: no clear error (exit $rc)"
[ -e "$data" ] && fail "--engine=valgrind without its tool: a perf.data was left"

auxsample_sim_workload "$tmp/workload" "$out"
wl=$tmp/workload

# The program's own functions, for the comparison of the engines.
cc -O1 -c -o "$tmp/workload.o" "$lib/auxsample_workload.c" > "$out" 2>&1 ||
	fail "cannot compile the workload alone"
nm --defined-only "$tmp/workload.o" | awk '$2 ~ /^[tT]$/ { print $3 }' > "$tmp/own"
nm -S "$wl" | grep -w -F -f "$tmp/own" > "$tmp/nm"

# truth ENGINE WHAT ARGS...: a recording decodes to its own truth.
truth() {
	local engine=$1 what=$2 rc

	shift 2
	perf auxsample simulate --engine="$engine" -o "$data" "$@" > "$out" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$engine, $what: simulate failed (exit $rc)"
		return
	fi
	perf script -i "$data" --itrace=e > "$out" 2>&1
	grep -q 'instruction trace error' "$out" &&
		fail "$engine, $what: perf's decoder found errors"
	python3 "$lib/auxsample_truth.py" "$data" 64 perf > "$out" 2>&1 ||
		fail "$engine, $what: perf's virtual LBR is not the truth"
	python3 "$lib/auxsample_truth.py" --auxsample "$data" 64 perf > "$out" 2>&1 ||
		fail "$engine, $what: perf auxsample script's virtual LBR is not the truth"
	echo "$engine, $what: $(tail -1 "$out")"
}

# branches ENGINE WORKLOAD...: the branches of a whole run, upstream's
# decoder of a full trace without samples in it.
branches() {
	local engine=$1

	shift
	perf auxsample simulate --engine="$engine" --full-trace -c 1000000000 -o "$data" \
		-- "$wl" "$@" > "$out" 2>&1 || fail "$engine, $*: full trace failed"
	perf script -i "$data" --itrace=b -F tid,ip,addr > "$tmp/$engine.branches" 2> "$out"
}

for w in "branches 20" "longjmp 10" "signal 10" "syscalls 20" "threads 10"; do
	# shellcheck disable=SC2086
	for engine in valgrind ptrace; do
		truth $engine "$w" -c 700 -- "$wl" $w
		branches $engine $w
	done
	python3 "$lib/auxsample_engines.py" "$tmp/nm" "$tmp/valgrind.branches" \
		"$tmp/ptrace.branches" > "$out" 2>&1 ||
		fail "$w: the engines took other branches"
	echo "$w: valgrind against ptrace: $(cat "$out")"
done

# A program that execs another: the new one's code is what each engine
# reads (the ptrace engine read the old program's memory after an exec).
for engine in valgrind ptrace; do
	truth $engine "exec" -c 700 -- "$wl" exec 5 "$wl" branches 10
done

# Dynamic linking, a shell that forks and execs, a program that maps code.
truth valgrind "dynamically linked /bin/true" -c 3000 -- /bin/true
truth valgrind "sh -c, fork and exec" -c 3000 -- /bin/sh -c '/bin/true; /bin/true'
perf report -D -i "$data" > "$out" 2>&1
[ "$(grep -c 'PERF_RECORD_COMM exec: true' "$out")" -eq 2 ] ||
	fail "sh -c: not two execs of true"
[ "$(grep -c 'PERF_RECORD_FORK' "$out")" -ge 2 ] || fail "sh -c: not two forks"
grep -q 'PERF_RECORD_MMAP2 .*libc.so' "$out" || fail "sh -c: no MMAP2 of libc"
grep -q 'PERF_RECORD_MMAP2 .*<[0-9a-f]\{40\}>.*/bin/\(dash\|sh\)' "$out" ||
	fail "sh -c: the shell's MMAP2 has no build-id"

# More commands one after the other than the simulated machine has CPUs
# (16): each takes the CPU the last one left at its exit (before, the
# 16th failed with ENOMEM).  Sampled and full trace, whose buffers of a
# CPU go on from where its last thread's ended: upstream's decoder
# follows the CPU's queue from one process to the next without an error.
seq17='i=0; while [ $i -lt 17 ]; do /bin/true; i=$((i + 1)); done'
truth valgrind "sh -c, 17 commands one after the other" -c 3000 -- /bin/sh -c "$seq17"
pids=$(perf script -i "$data" --no-itrace -F pid 2> /dev/null | sort -u | wc -l)
[ "$pids" -ge 17 ] || fail "17 commands: samples of $pids processes"
if perf auxsample simulate --full-trace -c 1000000000 -o "$data" -- /bin/sh -c "$seq17" \
	> "$out" 2>&1; then
	perf script -i "$data" --itrace=be -F pid,ip,addr > "$tmp/seq17" 2>&1
	grep -q 'instruction trace error' "$tmp/seq17" &&
		fail "17 commands, full trace: perf's decoder found errors"
	pids=$(awk '{ print $1 }' "$tmp/seq17" | sort -u | wc -l)
	[ "$pids" -ge 18 ] || fail "17 commands, full trace: branches of $pids processes"
else
	fail "17 commands, full trace: simulate failed"
fi

# Code mapped at every place of the tool's chunk of records, at its end
# too (see mmaps() in the workload): no record is cut in two.
truth valgrind "mmaps 520, a mapping at each word of a chunk" -c 20000 -- "$wl" mmaps 520

# Stops, as for the ptrace engine (its suite has the details): the
# program gets SIGTERM and its handler runs, the files are whole.
cat > "$tmp/blocker.c" <<'EOF'
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void on_term(int sig)
{
	close(open("got-sigterm", O_WRONLY | O_CREAT, 0644));
	_exit(sig);
}

int main(int argc, char **argv)
{
	signal(SIGTERM, argc > 1 && !strcmp(argv[1], "deaf") ? SIG_IGN : on_term);
	if (write(1, "ready\n", 6) != 6)
		return 1;
	for (;;)
		pause();
}
EOF
cc -O1 -static -o "$tmp/blocker" "$tmp/blocker.c" > "$out" 2>&1 || fail "cannot build the blocker"

# stopped SIGNAL EXIT [deaf]: the blocker under the Valgrind engine, stopped
# by SIGNAL once it is ready; perf dies of it, the files are whole.
stopped() {
	local sig=$1 want=$2 pid rc

	shift 2
	rm -f "$tmp/got-sigterm" "$tmp/stdout"
	(cd "$tmp" && exec perf auxsample simulate --engine=valgrind -c 500 -o "$data" \
		-- "$tmp/blocker" "$@") > "$tmp/stdout" 2> "$out" &
	pid=$!
	for _ in $(seq 600); do
		grep -q ready "$tmp/stdout" 2> /dev/null && break
		sleep 0.1
	done
	kill -"$sig" $pid
	wait $pid
	rc=$?
	[ $rc = "$want" ] || fail "SIG$sig: perf exited $rc, not $want"
	python3 "$lib/auxsample_truth.py" --auxsample "$data" 64 perf > "$tmp/cmp" 2>&1 ||
		fail "SIG$sig: the files are not whole or not the truth: $(cat "$tmp/cmp")"
	echo "valgrind, stopped by SIG$sig: $(tail -1 "$tmp/cmp")"
}
stopped TERM 143
[ -e "$tmp/got-sigterm" ] || fail "SIGTERM: the program did not get SIGTERM"
stopped HUP 129 deaf
grep -q "did not end on SIGTERM: killed" "$out" ||
	fail "SIGHUP: no word on the program that ignored SIGTERM"

# A bound: within a chunk of the tool's records of it, the files whole.
perf auxsample simulate --engine=valgrind -o "$data" --max-instructions 20000 -- \
	"$wl" branches 400 > /dev/null 2> "$out" || fail "--max-instructions: failed"
n=$(sed -n 's/.*stopped at --max-instructions 20000 after \([0-9]*\) instructions.*/\1/p' "$out")
[ "${n:-0}" -ge 20000 ] && [ "${n:-0}" -lt 40000 ] ||
	fail "--max-instructions 20000: stopped after ${n:-no} instructions"
python3 "$lib/auxsample_truth.py" --auxsample "$data" 64 perf > "$out" 2>&1 ||
	fail "--max-instructions: not the truth"

# A program that is not there: perf's message, nothing written.
rm -f "$data" "$data.truth"
perf auxsample simulate -o "$data" -- "$tmp/no-such-program" > "$out" 2>&1
rc=$?
[ $rc -ne 0 ] && ! killed $rc && grep -q "cannot run $tmp/no-such-program: No such file" "$out" ||
	fail "a missing program: no clear error (exit $rc)"
[ -e "$data" ] && fail "a missing program: a perf.data was left"
exit $err
