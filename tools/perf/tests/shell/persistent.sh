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

# shellcheck source=lib/auxsample_test.sh
. "$shelldir"/lib/auxsample_test.sh
err=0
tmp=$(mktemp -d /tmp/__perf_test.persistent.XXXXX)
chmod 755 "$tmp"
export PERF_PERSISTENT_DIR=$tmp/run
out=$tmp/out

# A throw-away user for the other side of the holder's checks.
hostile_uid=54321
hostile_user=perftest_persistent
made_user=
if ! getent passwd $hostile_uid > /dev/null && command -v useradd > /dev/null &&
   useradd -M -N -u $hostile_uid -s /usr/sbin/nologin $hostile_user 2> /dev/null; then
	made_user=1
fi
as_user="setpriv --reuid=$hostile_uid --regid=$hostile_uid --clear-groups"
mounted=

# What the test leaves besides $tmp: the events and their holder, the
# other user's daemons, the full disk, the user.
auxsample_test_undo() {
	perf persistent kill --all > /dev/null 2>&1
	[ -f "$PERF_PERSISTENT_DIR/holder.pid" ] &&
		kill "$(cat "$PERF_PERSISTENT_DIR/holder.pid")" 2> /dev/null
	pkill -u $hostile_uid -f 'persistent daemon' 2> /dev/null
	[ -n "$mounted" ] && umount "$tmp/full"
	[ -n "$made_user" ] && userdel $hostile_user 2> /dev/null
}
auxsample_test_traps

# fail WHY: the library's, with all of $out, if any, between rules.
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

# listed NAME FIELD: FIELD of the event NAME in perf persistent list --json.
listed() {
	perf persistent list --json | python3 -c '
import json, sys
print([e for e in json.load(sys.stdin) if e["name"] == sys.argv[1]][0][sys.argv[2]])
' "$1" "$2"
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
	s1=$(listed cpu_clock samples)
	busy 20
	s2=$(listed cpu_clock samples)
	[ "$s2" -gt "$s1" ] || fail "cpu_clock stopped counting after perf stat ($s1 -> $s2)"
}

test_other_user() {
	if $as_user perf persistent attach sw -o /dev/null --duration 1 > "$out" 2>&1; then
		fail "another user could read root's event"
	fi
	grep -q "permission denied: persistent event 'sw' belongs to root (uid 0)" "$out" ||
		fail "no 'permission denied' naming the owner for another user"
	if $as_user perf persistent kill sw > "$out" 2>&1; then
		fail "another user could kill root's event"
	fi
	grep -q 'permission denied' "$out" || fail "no 'permission denied' on kill"
	$as_user perf persistent list > "$out" 2>&1 || fail "another user cannot list"

	# Root of a user namespace of one's own is nobody to the host's holder.
	if $as_user unshare -Ur perf persistent attach sw -o /dev/null --duration 1 \
			> "$out" 2>&1; then
		fail "unshare -Ur perf persistent attach read root's event"
	fi
	grep -q 'not by root or you' "$out" ||
		fail "unshare -Ur: no word that the holder's directory is not root's or its own"
	if $as_user unshare -Ur perf persistent kill sw > "$out" 2>&1; then
		fail "unshare -Ur perf persistent kill killed root's event"
	fi

	# Whose an event is, is said only when it is not the reader's own
	# (the holder-protocol suite makes a user's event for root to read).
	perf persistent attach sw -o /dev/null --duration 1 > "$out" 2>&1
	grep -q 'belongs to' "$out" && fail "root was warned about its own event"
}

# The runtime directory as a user may have laid it out for root.
test_hostile_dirs() {
	local d

	mkdir "$tmp/real" && ln -s "$tmp/real" "$tmp/link"
	if PERF_PERSISTENT_DIR=$tmp/link perf persistent detach -e cpu-clock -C 0 \
			> "$out" 2>&1; then
		fail "the holder ran in a symbolic link"
	fi
	grep -q 'is not a directory (a symbolic link?)' "$out" || fail "no word on the link"

	if (cd "$tmp" && PERF_PERSISTENT_DIR=rel perf persistent detach -e cpu-clock -C 0) \
			> "$out" 2>&1; then
		fail "the holder ran in a relative directory"
	fi
	grep -q 'PERF_PERSISTENT_DIR=rel is not an absolute path' "$out" ||
		fail "no word on the relative directory"

	mkdir -m 0777 "$tmp/ww" && chmod 0777 "$tmp/ww"
	if PERF_PERSISTENT_DIR=$tmp/ww perf persistent detach -e cpu-clock -C 0 > "$out" 2>&1; then
		fail "the holder ran in a world-writable directory"
	fi
	grep -q 'is writable by others (mode 0777)' "$out" || fail "no word on the mode"

	# A user's directory, with links toward root's files planted in it.
	d=$tmp/udir
	mkdir "$tmp/victim" "$d" && echo keep > "$tmp/victim/f"
	echo secret > "$tmp/secret" && chmod 600 "$tmp/secret"
	chown $hostile_uid "$d"
	$as_user mkdir "$d/persistent"
	$as_user ln -s "$tmp/victim" "$d/persistent/events"
	$as_user ln -s "$tmp/secret" "$d/holder.pid"
	$as_user ln -s "$tmp/secret" "$d/holder.sock"
	for cmd in "detach -e cpu-clock -C 0" "list" "kill --all"; do
		# shellcheck disable=SC2086
		if PERF_PERSISTENT_DIR=$d perf persistent $cmd > "$out" 2>&1; then
			fail "root's 'perf persistent $cmd' used a user's directory"
		fi
		grep -q "is owned by uid $hostile_uid, not by" "$out" ||
			fail "root's '$cmd': no word on the directory's owner"
	done
	[ -f "$tmp/victim/f" ] || fail "root deleted files through a user's link"
	grep -q secret "$tmp/secret" || fail "root truncated a file through a user's link"

	# A holder run by a user: root's commands and events never go to it.
	mkdir "$tmp/uhome" && chown $hostile_uid "$tmp/uhome"
	PERF_PERSISTENT_DIR=$tmp/uhome/run $as_user perf persistent daemon > /dev/null 2>&1 &
	local upid=$! _
	for _ in $(seq 1 50); do
		[ -S "$tmp/uhome/run/holder.sock" ] && break
		sleep 0.1
	done
	[ -S "$tmp/uhome/run/holder.sock" ] || fail "a user's holder did not start"
	if PERF_PERSISTENT_DIR=$tmp/uhome/run perf persistent detach -e cpu-clock -C 0 \
			> "$out" 2>&1; then
		fail "root handed an event to a user's holder"
	fi
	grep -q "is owned by uid $hostile_uid, not by root or you" "$out" ||
		fail "root's detach: no word on whose holder it is"
	if PERF_PERSISTENT_DIR=$tmp/uhome/run perf record -o /dev/null -e persistent/x/ true \
			> "$out" 2>&1; then
		fail "root's perf record read a user's holder"
	fi
	kill $upid 2> /dev/null
	wait $upid
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
	detach -e cpu-clock -m 1|needs at least 2 pages
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
	grep -q 'had died; its events are gone: .*sw' "$out" ||
		fail "list did not name the events the dead holder took"
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
	perf persistent detach -e cpu-clock --name byid > /dev/null 2>&1 ||
		fail "detach to the daemon"
	local id
	id=$(listed byid id)
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

# perf record says when the holder goes; detach names what a dead one lost.
test_holder_gone() {
	local pid

	perf persistent detach -e cpu-clock --name gone > /dev/null 2>&1 || fail "detach gone"
	perf record -o "$tmp/g.data" -e persistent/gone/ -- sleep 2 > "$out" 2>&1 &
	pid=$!
	# The header is written once the event is open: the holder may go then.
	wait_for_file "$tmp/g.data" || fail "perf record did not open persistent/gone/"
	kill -9 "$(cat "$PERF_PERSISTENT_DIR/holder.pid")"
	wait $pid || fail "perf record failed when the holder died"
	grep -q 'the persistent event holder exited; persistent/gone/ is read no more' "$out" ||
		fail "perf record did not say the holder went away"
	perf persistent detach -e cpu-clock --name after > "$out" 2>&1 ||
		fail "detach after the holder died"
	grep -q 'had died; its events are gone: .*gone' "$out" ||
		fail "detach did not name the events the dead holder took"
}

# The on-demand holder keeps none of its starter's files open.
test_holder_fds() {
	local holder

	(umask 077; perf persistent detach -e cpu-clock --name fds 9> "$tmp/inherited") \
		> /dev/null 2>&1 || fail "detach fds"
	$as_user perf persistent list > "$out" 2>&1 ||
		fail "others cannot list: the holder kept its starter's umask 077"
	holder=$(cat "$PERF_PERSISTENT_DIR/holder.pid")
	[ -d "/proc/$holder/fd" ] || fail "no on-demand holder started for fds"
	local fd
	for fd in "/proc/$holder/fd/"*; do
		case $(readlink "$fd") in
		*inherited) fail "the on-demand holder kept its starter's fd 9" ;;
		esac
	done
	perf persistent kill fds > /dev/null 2>&1
}

# Killing the last event while another is detached: no detach is lost.
test_kill_race() {
	local i bad=0

	for i in $(seq 1 15); do
		perf persistent detach -e cpu-clock -C 0 --name k$i > /dev/null 2>&1 ||
			fail "detach k$i"
		perf persistent kill k$i > /dev/null 2>&1 &
		if ! perf persistent detach -e cpu-clock -C 0 --name n$i > "$out" 2>&1; then
			bad=$((bad + 1))
			cat "$out"
		fi
		wait
		perf persistent kill n$i > /dev/null 2>&1
	done
	[ $bad = 0 ] || fail "$bad of 15 detaches racing the last kill failed"
	sleep 0.5
	[ ! -e "$PERF_PERSISTENT_DIR" ] || fail "the holder did not go with its last event"
}

# A full disk: a clear error, and no file claiming samples it lacks.
test_full_disk() {
	local f=$tmp/full/f.data

	mkdir "$tmp/full"
	if ! mount -t tmpfs -o size=256k tmpfs "$tmp/full" 2> /dev/null; then
		echo "skip part: cannot mount a small tmpfs for the full-disk checks"
		return
	fi
	mounted=1
	perf persistent detach -e cpu-clock --name full > /dev/null 2>&1 || fail "detach full"
	if perf persistent attach full -o "$f" --duration 3 > "$out" 2>&1; then
		fail "attach to a full disk exited 0"
	fi
	grep -q 'No space left on device' "$out" || fail "attach: no word that the disk is full"
	if [ -e "$f" ]; then
		perf report -i "$f" --stdio > /dev/null 2>&1 ||
			fail "attach left a file perf report cannot read"
		grep -q 'samples of' "$out" && ! grep -q 'up to the error' "$out" &&
			fail "attach claimed samples without saying it stopped"
	fi
	if perf persistent attach full -o - --duration 1 > /dev/full 2> "$out"; then
		fail "attach -o - to /dev/full exited 0"
	fi
	grep -q 'No space left on device' "$out" || fail "attach -o -: the wrong error"
	perf persistent kill full > /dev/null 2>&1
	umount "$tmp/full" && mounted=
}

test_detach_list
test_two_readers
test_live
test_record_stat
test_other_user
test_hostile_dirs
test_errors
test_holder_killed
test_holder_gone
test_full_disk
test_kill
test_kill_race
test_holder_fds
test_kernel_path
exit $err
