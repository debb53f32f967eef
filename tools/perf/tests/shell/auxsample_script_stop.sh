#!/bin/bash
# perf auxsample script stopped by a signal ends at a whole sample
# SPDX-License-Identifier: GPL-2.0
#
# perf auxsample script writes its output a block at a time to a file or
# a pipe.  ^C or SIGTERM must still leave what a reader can use, as perf
# script does: the samples read printed whole, the output flushed (what
# was printed is the beginning of an uninterrupted run's output, up to a
# sample's end), the summary counting them, and perf dead of the signal,
# so that a shell sees it.  The run is stopped while it waits to write to
# a pipe that nobody reads yet: in the middle, whatever the machine's load.

set -u

# shellcheck source=lib/auxsample_sim.sh
. "$(dirname "$0")"/lib/auxsample_sim.sh
auxsample_sim_check

err=0
tmp=$(mktemp -d /tmp/__perf_test.auxsample_script_stop.XXXXX)
out=$tmp/out
data=$tmp/perf.data
pid=
auxsample_test_undo() {
	[ -n "${pid:-}" ] && kill -9 "$pid" 2> /dev/null
	exec 3>&- 4<&-
}
auxsample_test_traps

auxsample_sim_workload "$tmp/workload" "$out"
if ! (cd "$tmp" && perf auxsample simulate -o "$data" -c 1000 -- ./workload branches 8000) \
	> "$out" 2>&1; then
	fail "perf auxsample simulate failed"
	exit 1
fi
if ! perf auxsample script -i "$data" > "$tmp/full" 2> "$out"; then
	fail "perf auxsample script failed"
	exit 1
fi
# Far more than a pipe and the output buffer hold: the run blocks early.
if [ "$(stat -c %s "$tmp/full")" -lt $((2 << 20)) ]; then
	fail "the recording prints only $(stat -c %s "$tmp/full") bytes, too few to stop in the middle"
	exit 1
fi

# blocked_in_write PID: PID waits in write(2) (x86-64: syscall 1).
blocked_in_write() {
	[ "$(cut -d' ' -f1 "/proc/$1/syscall" 2> /dev/null)" = 1 ]
}

# stop SIGNAL STATUS: perf auxsample script stopped by SIGNAL while it
# waits on a full pipe dies of it (STATUS), its output a prefix of the
# whole at a sample's end.
stop() {
	local sig=$1 status=$2 rc fifo=$tmp/fifo partial=$tmp/partial.$1 said printed

	rm -f "$fifo"
	mkfifo "$fifo"
	# Held open for reading, so that perf's open does not wait for a reader.
	exec 3<> "$fifo"
	perf auxsample script -i "$data" > "$fifo" 2> "$out" &
	pid=$!
	for _ in $(seq 3000); do
		blocked_in_write "$pid" && break
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	if ! blocked_in_write "$pid"; then
		fail "SIG$sig: perf auxsample script never waited on the full pipe"
		exec 3>&-
		return
	fi
	kill -s "$sig" "$pid"
	# Opened while this shell still writes to it (perf may be gone); the
	# reader holds no writing end, so it ends when perf does.
	exec 4< "$fifo"
	cat <&4 3>&- 4<&- > "$partial" &
	exec 3>&- 4<&-
	wait "$pid"
	rc=$?
	pid=
	wait
	[ "$rc" = "$status" ] ||
		fail "SIG$sig: perf auxsample script exited $rc, not $status (dead of the signal)"
	if [ ! -s "$partial" ] || cmp -s "$partial" "$tmp/full"; then
		fail "SIG$sig: the output is not cut short ($(stat -c %s "$partial") bytes)"
		return
	fi
	if ! python3 - "$partial" "$tmp/full" <<'EOF'
import sys
part = open(sys.argv[1], 'rb').read()
full = open(sys.argv[2], 'rb').read()
# A prefix, ending where the next sample's first line (no tab) begins.
rest = full[len(part):]
sys.exit(0 if full.startswith(part) and part.endswith(b'\n') and
         not rest.startswith(b'\t') else 1)
EOF
	then
		fail "SIG$sig: the output is not the whole output's beginning up to a sample's end"
		return
	fi
	said=$(sed -n 's/^\[ \([0-9]*\) AUX samples,.*/\1/p' "$out")
	printed=$(grep -c -v '^	' "$partial")
	[ "$said" = "$printed" ] ||
		fail "SIG$sig: the summary says ${said:-no} samples, the output has $printed"
}

stop INT 130
stop TERM 143

exit $err
