#!/bin/bash
# perf auxsample simulate stopped early, bounded, watched and refused
# SPDX-License-Identifier: GPL-2.0
#
# A simulation runs at some 20,000 instructions a second: people stop it.
# SIGINT, SIGTERM and SIGHUP (and timeout(1)) must stop it as they stop
# perf record: the program gets SIGTERM, perf.data and its ground truth
# are finished, every reader accepts them and the truth holds every
# sample written, and perf dies of the signal.  --max-instructions and
# --duration bound a run, progress shows on a terminal only, the truth
# goes to .old with perf.data, and bad options get a message that says
# what to do, with perf's exit codes (129 for usage, 255 for errors).

set -u

# shellcheck source=lib/auxsample_sim.sh
. "$(dirname "$0")"/lib/auxsample_sim.sh
auxsample_sim_check

# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
err=0
tmp=$(mktemp -d /tmp/__perf_test.auxsample_simulate_stop.XXXXX)
out=$tmp/out
auxsample_test_traps
lib=$(dirname "$0")/lib
pid=
# These checks time the ptrace engine, which runs some 20,000 instructions
# a second (a run still going after 3 s, a python3 still starting after
# 11 s, a bound at the very instruction): the Valgrind engine's stops are
# checked in the suite that compares the engines.
engine=--engine=ptrace

auxsample_test_undo() {
	[ -n "${pid:-}" ] && kill -9 "$pid" 2> /dev/null
}

auxsample_sim_workload "$tmp/workload" "$out"
wl=$tmp/workload

# A program that waits in pause(): a thread blocked in a syscall.  On
# SIGTERM it leaves a file, so that the test sees that it got one.
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
if ! cc -O1 -static -o "$tmp/blocker" "$tmp/blocker.c" > "$out" 2>&1; then
	echo "Skip: cannot build a static test program (no static libc?)"
	exit 2
fi

# start DATA ARGS...: perf auxsample simulate -o DATA ARGS... in the
# background, in $tmp (where the blocker leaves its file); its pid in $pid.
start() {
	local data=$1

	shift
	(cd "$tmp" && exec perf auxsample simulate $engine -o "$data" "$@") \
		> "$tmp/stdout" 2> "$out" &
	pid=$!
}

# wait_for WHAT COMMAND...: poll COMMAND until it succeeds, for up to
# 300 s (a loaded machine steps slowly); fail if it never does.
wait_for() {
	local what=$1

	shift
	for _ in $(seq 3000); do
		"$@" && return 0
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	fail "$what: never happened"
	return 1
}

# finish: perf's exit status once it has ended, killing it if it does
# not within 120 s of being stopped (a hang is a failure).
finish() {
	local rc

	for _ in $(seq 1200); do
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2> /dev/null; then
		kill -9 "$pid"
		wait "$pid"
		pid=
		fail "perf did not end after it was stopped"
		return 255
	fi
	wait "$pid"
	rc=$?
	pid=
	return $rc
}

bigger() {
	[ "$(stat -c %s "$1" 2> /dev/null || echo 0)" -ge "$2" ]
}

# readable WHAT DATA [COMPARE...]: every reader takes DATA and its truth,
# the truth has every sample written, each equal to what
# libauxsample decodes (and to perf's own decoder if COMPARE says 'perf').
readable() {
	local what=$1 data=$2 samples said compare

	shift 2
	said=$(sed -n 's/.* (\([0-9]*\) samples) and .*/\1/p' "$out")
	if ! samples=$(auxsample_sim_samples "$data.truth" 2> "$out"); then
		fail "$what: the ground truth is not whole"
		return
	fi
	[ "$samples" = "$said" ] ||
		fail "$what: perf said it wrote ${said:-no} samples, the truth holds $samples"
	perf report -i "$data" --stdio > "$out" 2>&1 ||
		fail "$what: perf report cannot read the file"
	grep -q 'incompatible\|truncated' "$out" && fail "$what: perf report: a broken file"
	perf script -i "$data" --itrace=L > "$tmp/script" 2> "$out" ||
		fail "$what: perf script --itrace=L cannot read the file"
	[ "$(grep -c 'instructions:u' "$tmp/script")" = "$samples" ] ||
		fail "$what: perf script --itrace=L does not show the $samples samples"
	[ "$samples" -gt 0 ] || return
	perf auxsample script -i "$data" > /dev/null 2> "$out" ||
		fail "$what: perf auxsample script cannot read the file"
	grep -q "^\[ $samples AUX samples" "$out" ||
		fail "$what: perf auxsample script does not decode the $samples samples"
	python3 "$lib/auxsample_truth.py" --auxsample "$data" 64 perf > "$out" 2>&1 ||
		fail "$what: perf auxsample script's virtual LBR is not the truth"
	for compare in "$@"; do
		[ "$compare" = perf ] || continue
		python3 "$lib/auxsample_truth.py" "$data" 64 perf > "$out" 2>&1 ||
			fail "$what: perf's virtual LBR is not the truth"
	done
	echo "$what: $samples samples, whole: $(cat "$out")"
}

# 1. ^C in a long simulation (python3 runs some 12M instructions): once
# some samples are written, SIGINT stops it, perf dies of SIGINT.
start "$tmp/int.data" -- python3 -c pass
if wait_for "python3: 15 samples written" bigger "$tmp/int.data" 65536; then
	kill -INT "$pid"
	finish
	rc=$?
	[ $rc = 130 ] || fail "SIGINT: perf exited $rc, not 130 (killed by SIGINT, as perf record)"
	grep -q "stopped by SIGINT after [0-9]* instructions; wrote .* (.* samples)" "$out" ||
		fail "SIGINT: no word on what was written"
	readable "SIGINT in python3 -c pass" "$tmp/int.data"
fi

# 2. SIGTERM while the program blocks in a syscall: it is woken, gets
# SIGTERM as from perf record (its handler runs), and the timeless
# recording is the truth for perf's own decoder too.
start "$tmp/term.data" --no-tsc -c 500 -- "$tmp/blocker"
if wait_for "blocker: ready" grep -q ready "$tmp/stdout"; then
	kill -TERM "$pid"
	finish
	rc=$?
	[ $rc = 143 ] || fail "SIGTERM: perf exited $rc, not 143 (killed by SIGTERM)"
	[ -e "$tmp/got-sigterm" ] || fail "SIGTERM: the program did not get SIGTERM"
	readable "SIGTERM, program blocked" "$tmp/term.data" perf
fi

# 3. SIGHUP, and a program that ignores SIGTERM: killed after a while.
start "$tmp/hup.data" -c 500 -- "$tmp/blocker" deaf
if wait_for "deaf blocker: ready" grep -q ready "$tmp/stdout"; then
	kill -HUP "$pid"
	finish
	rc=$?
	[ $rc = 129 ] || fail "SIGHUP: perf exited $rc, not 129 (killed by SIGHUP)"
	grep -q "did not end on SIGTERM: killed" "$out" ||
		fail "SIGHUP: no word on the program that ignored SIGTERM"
	readable "SIGHUP, program deaf to SIGTERM" "$tmp/hup.data"
fi
pgrep -f "$tmp/blocker" > /dev/null && fail "a program of the test was left running"

# 4. timeout(1), whenever it comes (perhaps before any sample): whole
# files.  The program runs for minutes under ptrace: 400 iterations took
# 2 s on a fast machine, and the run ended before timeout's 3 s.
timeout -s INT 3 perf auxsample simulate $engine -o "$tmp/timeout.data" -- "$wl" branches 400000 \
	> /dev/null 2> "$out"
rc=$?
[ $rc = 124 ] || fail "timeout -s INT: exit $rc, not timeout's 124"
readable "timeout -s INT 3" "$tmp/timeout.data"

# 5. Bounds: a run that reaches one exits 0, the files whole.
perf auxsample simulate $engine -o "$tmp/max.data" --no-tsc -c 1000 --max-instructions 5000 -- \
	"$wl" branches 40 > /dev/null 2> "$out"
rc=$?
[ $rc = 0 ] || fail "--max-instructions: exit $rc"
grep -q "stopped at --max-instructions 5000 after 5000 instructions; wrote .* (5 samples)" "$out" ||
	fail "--max-instructions 5000: not 5 samples after 5000 instructions"
readable "--max-instructions 5000" "$tmp/max.data" perf
# Progress comes every 10 s where it is asked for off a terminal: none here.
perf auxsample simulate $engine -o "$tmp/duration.data" --duration 11 -- python3 -c pass \
	> /dev/null 2> "$out"
rc=$?
[ $rc = 0 ] || fail "--duration: exit $rc"
grep -q "stopped at --duration 11s after" "$out" || fail "--duration 11: not stopped by it"
grep -q 'instructions/s' "$out" && fail "progress shown in a log, unasked"
readable "--duration 11" "$tmp/duration.data"

# 6. perf.data goes to perf.data.old: its truth goes along to perf.data.old.truth.
cp "$tmp/max.data.truth" "$tmp/first.truth"
perf auxsample simulate $engine -o "$tmp/max.data" -c 700 --max-instructions 3000 -- \
	"$wl" branches 40 > /dev/null 2>&1
cmp -s "$tmp/first.truth" "$tmp/max.data.old.truth" ||
	fail "the truth of perf.data.old is not in perf.data.old.truth"
[ "$(auxsample_sim_samples "$tmp/max.data.truth")" = 4 ] ||
	fail "the new perf.data.truth is not the new run's"
# A perf.data without truth: no stale truth may seem to describe its .old.
rm "$tmp/max.data.truth"
perf auxsample simulate $engine -o "$tmp/max.data" --max-instructions 1000 -- "$wl" branches 40 \
	> /dev/null 2>&1
[ -e "$tmp/max.data.old.truth" ] && fail "a stale perf.data.old.truth was left"

# 7. Progress: a line a second on a terminal (and none in a log, above).
if command -v script > /dev/null; then
	tty_sim="perf auxsample simulate $engine -o $tmp/tty.data"
	script -qec "$tty_sim --duration 3 -- python3 -c pass" /dev/null > "$out" 2>&1
	grep -q 'instructions, [0-9]* samples, [0-9]* instructions/s, .* MB written' "$out" ||
		fail "no progress on a terminal"
	script -qec "$tty_sim --no-progress --duration 3 -- python3 -c pass" /dev/null \
		> "$out" 2>&1
	grep -q 'instructions/s' "$out" && fail "progress shown with --no-progress"
else
	echo "no script(1): progress on a terminal not tested"
fi

# 8. Bad options and outputs: what to do, exit 129 (usage) or 255, no files.
# refused RC WHAT MESSAGE ARGS...
refused() {
	local want=$1 msg=$2 rc

	shift 2
	perf auxsample simulate $engine "$@" > "$out" 2>&1
	rc=$?
	killed $rc && fail "'simulate $*': killed by signal $((rc - 128))"
	[ $rc = "$want" ] || fail "'simulate $*': exit $rc, not $want"
	grep -q -- "$msg" "$out" || fail "'simulate $*': no message saying '$msg'"
}
cd "$tmp" || exit 1
refused 129 "Error: -c must be at least 1" -c 0 -o bad.data -- "$wl" branches 1
refused 129 "count expects a number of instructions, not '-1'" -c -1 -o bad.data -- true
refused 129 "max-instructions expects a number of instructions" --max-instructions 1e6 -- true
refused 129 "duration expects a time of at least 1s" --duration 0 -o bad.data -- true
refused 129 "duration expects a time of at least 1s" --duration 5x -o bad.data -- true
refused 129 "Error: --mtc needs TSC packets (drop --no-tsc)" --mtc --no-tsc -o bad.data -- true
refused 129 "Error: -o - : .*write a file" -o - -- true
refused 129 "Error: no command: name the program" -o bad.data
refused 255 "cannot write $tmp/none/x.data: name a file in a writable directory with -o" \
	-o "$tmp/none/x.data" -- "$wl" branches 1
refused 255 "cannot run $tmp/no-such-program: No such file or directory" \
	-o bad.data -- "$tmp/no-such-program"
cd - > /dev/null || exit 1
ls "$tmp"/bad.data* > /dev/null 2>&1 && fail "a refused simulation left files"
exit $err
