#!/bin/bash
# perf persistent: detach, list, attach, record, stat, kill
# SPDX-License-Identifier: GPL-2.0
#
# Real software events and tracepoints held by 'perf persistent daemon'
# (PERF_PERSISTENT_DIR points it at a directory of the test's own), then
# the kernel path on a fake sysfs 'persistent' PMU, whose opens and
# ioctls this kernel must refuse with a clear error.

set -u

shelldir=$(dirname "$0")
# shellcheck source=lib/fake_sysfs.sh
. "$shelldir"/lib/fake_sysfs.sh

if [ "$(id -u)" != 0 ]; then
	echo "skip: needs root, for system-wide events and another user's view"
	exit 2
fi
if ! perf list tracepoint 2>/dev/null | grep -q 'sched:sched_switch'; then
	echo "skip: no sched:sched_switch tracepoint (tracefs not mounted?)"
	exit 2
fi

err=0
tmp=$(mktemp -d /tmp/__perf_test.persistent.XXXXX)
chmod 755 "$tmp"
export PERF_PERSISTENT_DIR=$tmp/run
out=$tmp/out

cleanup() {
	perf persistent kill --all > /dev/null 2>&1
	[ -f "$PERF_PERSISTENT_DIR/holder.pid" ] &&
		kill "$(cat "$PERF_PERSISTENT_DIR/holder.pid")" 2> /dev/null
	rm -rf "$tmp"
	trap - EXIT TERM INT
}
trap 'cleanup; exit 1' TERM INT
trap cleanup EXIT

fail() {
	echo "FAIL: $*"
	if [ -s "$out" ]; then
		echo "---- output ----"
		cat "$out"
		echo "----------------"
	fi
	err=1
}

# Context switches and CPU time for the events to see.
busy() {
	local _

	for _ in $(seq 1 "$1"); do
		sleep 0.01
	done
}

# Wait until FILE has its perf.data header: its reader is attached.
wait_for_file() {
	local _

	for _ in $(seq 1 100); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# Switch context until the background readers PIDs... are gone.
busy_while() {
	while kill -0 "$@" 2> /dev/null; do
		sleep 0.01
	done
}

nsamples() {
	perf script -i "$1" 2> /dev/null | grep -c "$2"
}

test_detach_list() {
	perf persistent detach -e sched:sched_switch --name sw > "$out" 2>&1 ||
		fail "detach sched:sched_switch"
	grep -q '^sw [0-9]' "$out" || fail "detach does not print the name and id"
	perf persistent detach -e cpu-clock > "$out" 2>&1 || fail "detach cpu-clock"
	grep -q '^cpu_clock [0-9]' "$out" || fail "cpu-clock does not get the name cpu_clock"

	[ -f "$PERF_PERSISTENT_DIR/persistent/events/sw" ] || fail "events/sw is not published"
	grep -q '^persistent,config=[0-9]' "$PERF_PERSISTENT_DIR/persistent/events/sw" ||
		fail "events/sw is not 'persistent,config=<id>'"

	busy 20
	perf persistent list > "$out" 2>&1 || fail "list"
	grep -q '^sw .*sched:sched_switch .* root ' "$out" || fail "list lacks sw"
	grep -q '^cpu_clock .*cpu-clock ' "$out" || fail "list lacks cpu_clock"

	perf persistent list --json > "$out" 2>&1 || fail "list --json"
	python3 -c '
import json, sys
v = {e["name"]: e for e in json.load(open(sys.argv[1]))}
assert v["sw"]["event"] == "sched:sched_switch", v
assert v["cpu_clock"]["samples"] > 0, v
assert v["sw"]["owner"] == "root" and v["sw"]["buffer_pages"] == 32, v
' "$out" || fail "list --json: wrong contents"
}

# Two readers at once both see the shared buffer's records.
test_two_readers() {
	perf persistent attach sw -o "$tmp/a1.data" --duration 2 > "$tmp/a1.out" 2>&1 &
	local p1=$!
	perf persistent attach sw -o "$tmp/a2.data" --duration 2 --no-backlog \
		> "$tmp/a2.out" 2>&1 &
	local p2=$!

	# Sleep (and so switch) all the while both read, however slow they start.
	busy_while $p1 $p2
	wait $p1 || { cat "$tmp/a1.out" > "$out"; fail "first attach failed"; }
	wait $p2 || { cat "$tmp/a2.out" > "$out"; fail "second attach failed"; }

	local n1 n2
	n1=$(nsamples "$tmp/a1.data" 'sched:sched_switch: prev_comm=')
	n2=$(nsamples "$tmp/a2.data" 'sched:sched_switch: prev_comm=')
	[ "$n1" -gt 0 ] || fail "first reader got no sched_switch samples"
	[ "$n2" -gt 0 ] || fail "second reader got no sched_switch samples"
	# The test's own sleeps switch out: both readers saw them.
	perf script -i "$tmp/a2.data" 2> /dev/null | grep -q 'prev_comm=sleep' ||
		fail "second reader did not see the sleeps"
	echo "two readers: $n1 and $n2 sched_switch samples"
}

test_live() {
	perf persistent attach cpu_clock --duration 1 > "$out" 2>&1 ||
		fail "live attach failed"
	grep -q 'cpu-clock:' "$out" || fail "live attach printed no cpu-clock samples"
}

test_record_stat() {
	perf record -o "$tmp/r.data" -e persistent/cpu_clock/ -- sleep 1 > "$out" 2>&1 ||
		fail "perf record -e persistent/cpu_clock/"
	local n
	n=$(nsamples "$tmp/r.data" 'persistent/cpu_clock/:')
	[ "$n" -gt 0 ] || fail "perf record got no samples of the persistent event"
	perf evlist -i "$tmp/r.data" > "$out" 2>&1
	grep -q 'persistent/cpu_clock/' "$out" || fail "perf.data lacks the event's name"

	# A persistent tracepoint beside an event of perf record's own.
	perf record -o "$tmp/r2.data" -e task-clock -e persistent/sw/ -- \
		sh -c 'for i in 1 2 3 4 5; do sleep 0.05; done' > "$out" 2>&1 ||
		fail "perf record -e task-clock -e persistent/sw/"
	perf script -i "$tmp/r2.data" > "$out" 2>&1 || fail "perf script of the mixed record"
	grep -q 'task-clock:' "$out" || fail "the mixed record lacks task-clock samples"
	grep -q 'persistent/sw/: prev_comm=sleep' "$out" ||
		fail "the mixed record lacks the formatted sched_switch of the sleeps"

	perf stat -x, -e persistent/cpu_clock/ sleep 0.5 > "$out" 2>&1 ||
		fail "perf stat -e persistent/cpu_clock/"
	local count
	count=$(awk -F, '/persistent\/cpu_clock/ { print int($1) }' "$out")
	# Two CPUs for 0.5 s count about 1e9 ns; since creation it would be more.
	[ "${count:-0}" -gt 100000000 ] || fail "perf stat count '$count' is too small"
	[ "${count:-0}" -lt $((5 * 1000000000 * $(nproc))) ] ||
		fail "perf stat count '$count' is not the run's"

	# perf stat must not have stopped it for the others.
	local s1 s2
	s1=$(perf persistent list --json | python3 -c \
		'import json,sys; print([e for e in json.load(sys.stdin) if e["name"] == "cpu_clock"][0]["samples"])')
	busy 20
	s2=$(perf persistent list --json | python3 -c \
		'import json,sys; print([e for e in json.load(sys.stdin) if e["name"] == "cpu_clock"][0]["samples"])')
	[ "$s2" -gt "$s1" ] || fail "cpu_clock stopped counting after perf stat ($s1 -> $s2)"
}

test_other_user() {
	local as_other="setpriv --reuid=54321 --regid=54321 --clear-groups"

	if ! command -v setpriv > /dev/null; then
		echo "skip part: no setpriv for the other-user checks"
		return
	fi
	if $as_other perf persistent attach sw -o /dev/null --duration 1 > "$out" 2>&1; then
		fail "another user could read root's event"
	fi
	grep -q 'permission denied' "$out" || fail "no 'permission denied' for another user"
	if $as_other perf persistent kill sw > "$out" 2>&1; then
		fail "another user could kill root's event"
	fi
	grep -q 'permission denied' "$out" || fail "no 'permission denied' on kill"
	$as_other perf persistent list > "$out" 2>&1 || fail "another user cannot list"
}

test_errors() {
	local spec want

	while IFS='|' read -r spec want; do
		# shellcheck disable=SC2086
		if perf persistent $spec > "$out" 2>&1; then
			fail "'perf persistent $spec' succeeded"
		fi
		grep -qF -- "$want" "$out" || fail "'$spec': no error saying '$want'"
	done <<-EOT
	attach nosuch|unknown persistent event 'nosuch'
	kill nosuch|unknown persistent event 'nosuch'
	detach -e no_such_event_xyz|invalid event 'no_such_event_xyz'
	detach -e cpu-clock --name sw|a persistent event called 'sw' exists
	detach -e cpu-clock --name 9lives|is '9lives' a valid name
	detach -e cpu-clock,task-clock|detach one event at a time
	EOT
}

# The holder dies with a reader attached; then everything recovers.
test_holder_killed() {
	local pid

	perf persistent attach sw -o "$tmp/k.data" > "$out" 2>&1 &
	pid=$!
	wait_for_file "$tmp/k.data" || fail "attach did not start writing"
	busy 30
	kill -9 "$(cat "$PERF_PERSISTENT_DIR/holder.pid")"
	if wait $pid; then
		fail "attach exited 0 when the holder died"
	fi
	grep -q 'holder exited' "$out" || fail "attach did not say the holder exited"
	[ "$(nsamples "$tmp/k.data" 'sched:sched_switch')" -gt 0 ] ||
		fail "what was read before the holder died was lost"

	perf persistent list > "$out" 2>&1 || fail "list after the holder died"
	grep -q 'had died' "$out" || fail "list did not notice the dead holder"
	[ ! -e "$PERF_PERSISTENT_DIR/persistent" ] || fail "the dead holder's PMU is still there"
	perf persistent detach -e cpu-clock --name again > "$out" 2>&1 ||
		fail "detach after the holder died"
	perf persistent list > "$out" 2>&1
	grep -q '^again ' "$out" || fail "the new holder does not list 'again'"
}

test_kill() {
	perf persistent detach -e task-clock --name tc > /dev/null 2>&1 || fail "detach task-clock"
	perf persistent kill tc > "$out" 2>&1 || fail "kill tc"
	perf persistent list > "$out" 2>&1
	grep -q '^tc ' "$out" && fail "tc is still listed after kill"
	[ ! -e "$PERF_PERSISTENT_DIR/persistent/events/tc" ] || fail "events/tc was not removed"

	perf persistent kill --all > "$out" 2>&1 || fail "kill --all"
	sleep 0.5
	[ ! -e "$PERF_PERSISTENT_DIR" ] || fail "the holder did not go with its last event"

	# A holder run by hand stays until SIGTERM, then closes all and cleans up.
	perf persistent daemon > "$out" 2>&1 &
	local pid=$! _
	for _ in $(seq 1 50); do
		[ -S "$PERF_PERSISTENT_DIR/holder.sock" ] && break
		sleep 0.1
	done
	perf persistent detach -e cpu-clock --name byid > /dev/null 2>&1 || fail "detach to the daemon"
	local id
	id=$(perf persistent list --json | python3 -c \
		'import json,sys; print([e for e in json.load(sys.stdin) if e["name"] == "byid"][0]["id"])')
	perf persistent attach "$id" -o "$tmp/id.data" --duration 1 > "$out" 2>&1 ||
		fail "attach by id $id"
	[ "$(nsamples "$tmp/id.data" 'cpu-clock:')" -gt 0 ] || fail "attach by id got no samples"
	kill -TERM $pid
	wait $pid || fail "the daemon did not exit cleanly on SIGTERM"
	[ ! -e "$PERF_PERSISTENT_DIR" ] || fail "the daemon left its directory behind"
}

# The kernel ABI on a fake sysfs: what is opened and ioctl()ed, and the
# errors of a kernel without the persistent PMU.
test_kernel_path() {
	local fake=$tmp/sysfs type=4242

	fake_pmu "$fake" persistent $type format/persistent attr5:23 \
		events/mce_record persistent,config=106 cpumask 0
	SYSFS_PATH=$fake perf persistent list > "$out" 2>&1 || fail "kernel list"
	grep -q '^mce_record  *106 ' "$out" || fail "kernel list lacks mce_record (id 106)"

	if SYSFS_PATH=$fake perf --debug perf-event-open persistent attach mce_record \
			-o /dev/null > "$out" 2>&1; then
		fail "attach to the fake kernel PMU succeeded"
	fi
	grep -q "^  type  *$type (persistent)" "$out" || fail "kernel attach: not PMU type $type"
	grep -q '^  config  *0x6a' "$out" || fail "kernel attach: config is not the id 106"
	# attr5:23, where format/persistent puts the flag.
	grep -q '^  mmap2  *1' "$out" || fail "kernel attach: attr5:23 is not set"
	grep -q 'this kernel lacks persistent events' "$out" ||
		fail "kernel attach: the error does not say what is missing"

	if SYSFS_PATH=$fake perf --debug perf-event-open persistent detach -e cpu-clock -C 0 \
			> "$out" 2>&1; then
		fail "PERF_EVENT_IOC_DETACH succeeded on this kernel"
	fi
	grep -q 'PERF_EVENT_IOC_DETACH (0x2408)' "$out" || fail "detach did not issue _IO('\$', 8)"
	grep -q 'this kernel lacks persistent events' "$out" ||
		fail "kernel detach: the error does not say what is missing"

	if SYSFS_PATH=$fake perf record -o "$tmp/kr.data" -e persistent/mce_record/ true \
			> "$out" 2>&1; then
		fail "perf record -e persistent/mce_record/ succeeded on this kernel"
	fi
	grep -q 'this kernel lacks persistent events' "$out" ||
		fail "kernel record: the error does not say what is missing"
}

test_detach_list
test_two_readers
test_live
test_record_stat
test_other_user
test_errors
test_holder_killed
test_kill
test_kernel_path
exit $err
