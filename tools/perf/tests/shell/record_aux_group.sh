#!/bin/bash
# perf record -A AUX sampling groups (fake sysfs intel_pt)
# SPDX-License-Identifier: GPL-2.0
#
# No Intel PT here: fake sysfs trees (SYSFS_PATH) publish intel_pt as a
# real kernel does, and the attr of whole perf record commands is read
# from --debug perf-event-open, which shows every open attempt.
#  - In tree 'nopt' intel_pt has a type no kernel hands out: the AUX event's
#    open fails and its attr shows.
#  - In tree 'swpt' intel_pt has the software PMU's type, so that
#    -Aintel_pt/config=0/ opens as a software event and the members' attrs
#    show too, before the kernel refuses to AUX-sample a software leader.

set -u

# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
err=0
tmp=$(mktemp -d /tmp/__perf_test.aux_group.XXXXX)
out=$tmp/out
data=$tmp/perf.data
auxsample_test_traps

# shellcheck source=lib/fake_sysfs.sh
. "$(dirname "$0")"/lib/fake_sysfs.sh

fake_intel_pt "$tmp/nopt" 4244
fake_cs_etm "$tmp/nopt" 4245
fake_pmu "$tmp/nopt" notaux 4246 format/event config:0-7
fake_intel_pt "$tmp/swpt" 1
fake_pmu "$tmp/noaux" notaux 4246 format/event config:0-7

# fail WHY: the library's, with more of $out between rules.
fail() {
	echo "FAIL: $*"
	echo "---- output ----"
	head -c 4000 "$out"
	echo "----------------"
	err=1
}

# run TREE perf-args...: perf with SYSFS_PATH=TREE, output in $out; its
# exit status, and a failure if a signal killed it.
run() {
	local tree=$1 rc

	shift
	SYSFS_PATH=$tmp/$tree perf "$@" > "$out" 2>&1
	rc=$?
	killed $rc && fail "perf $*: killed by signal $((rc - 128))"
	return $rc
}

# The group that -v describes.
expect_group() {
	local what=$1 want=$2

	grep -qF "AUX sampling group: $want" "$out" || fail "$what: group is not '$want'"
}

# attr_of N FIELD: FIELD of the Nth attr dump in $out (1-based).
attr_of() {
	awk -v n="$1" -v f="$2" '
		/^perf_event_attr:/ { i++ }
		i == n && $1 == f { $1 = ""; sub(/^ +/, ""); print; exit }' "$out"
}

# open_of N: the sys_perf_event_open line after the Nth attr dump.
open_of() {
	awk -v n="$1" '
		/^perf_event_attr:/ { i++ }
		i == n && /^sys_perf_event_open:/ { print; exit }' "$out"
}

expect_attr() {
	local what=$1 n=$2 field=$3 want=$4 got

	got=$(attr_of "$n" "$field")
	[ "$got" = "$want" ] || fail "$what: attr $n $field is '$got', expected '$want'"
}

test_seed_cycles() {
	local what="-Aintel_pt -e cycles,instructions,branch-misses"

	run nopt record -v --dry-run -o "$data" -Aintel_pt \
		-e 'cycles,instructions,branch-misses' true ||
		fail "$what: dry run failed"
	expect_group "$what" \
		"intel_pt// leads 3 events: cycles, instructions, branch-misses; sample size default"

	# The AUX event: first, sample mode (psb_period forced to 0), traces
	# user and kernel as the members count both.
	if run nopt --debug perf-event-open record -o "$data" -Aintel_pt \
			-e 'cycles,instructions,branch-misses' true; then
		fail "$what: opened a PMU that does not exist"
	fi
	expect_attr "$what" 1 type "4244 (intel_pt)"
	expect_attr "$what" 1 config 0xe601
	expect_attr "$what" 1 "{" "sample_period, sample_freq } 1"
	expect_attr "$what" 1 exclude_kernel ""
	expect_attr "$what" 1 exclude_user ""
	open_of 1 | grep -q 'group_fd -1' || fail "$what: the AUX event is not a leader"
}

test_seed_sched() {
	local what="-Aintel_pt -e 'sched:*' -a" n

	if ! perf list tracepoint 2>/dev/null | grep -q 'sched:sched_switch'; then
		echo "sched tracepoints not readable, skipped $what"
		return
	fi
	run nopt record -v --dry-run -o "$data" -Aintel_pt -e 'sched:*' -a sleep 1 ||
		fail "$what: dry run failed"
	n=$(perf list tracepoint 2>/dev/null | grep -c ' sched:')
	expect_group "$what" "intel_pt// leads $n events: sched:"
	grep -q 'sched:sched_switch' "$out" || fail "$what: sched:sched_switch not in the group"
}

# Members: group_fd is the AUX event's fd, AUX in sample_type, the size.
test_members() {
	local what="-Aintel_pt/config=0/,8192 -C 0 -c 10000 -e cycles:u" lfd

	run swpt --debug perf-event-open record -o "$data" -C 0 -c 10000 \
		-Aintel_pt/config=0/,8192 -e cycles:u
	lfd=$(open_of 1 | sed -n 's/.*= \([0-9]*\)$/\1/p')
	[ -n "$lfd" ] || fail "$what: the AUX event did not open"
	open_of 2 | grep -q "cpu 0  group_fd $lfd " || fail "$what: member not in the AUX group"
	expect_attr "$what" 1 exclude_kernel 1
	expect_attr "$what" 2 sample_type "IP|TID|TIME|CPU|IDENTIFIER|AUX"
	expect_attr "$what" 2 aux_sample_size 8192
	expect_attr "$what" 2 "{" "sample_period, sample_freq } 10000"

	what="-p PID -Aintel_pt/config=0/ -e cycles:u"
	sleep 10 &
	run swpt --debug perf-event-open record -o "$data" -p $! \
		-Aintel_pt/config=0/ -e cycles:u -- sleep 0.1
	kill $! 2>/dev/null
	open_of 2 | grep -q "pid $!  cpu" || fail "$what: member not opened for the pid"
	expect_attr "$what" 2 aux_sample_size 4096

	what="-a -Aintel_pt/config=0/ -e cycles:k"
	run swpt --debug perf-event-open record -o "$data" -a \
		-Aintel_pt/config=0/ -e cycles:k -- true
	open_of 2 | grep -q "pid -1  cpu 0  group_fd" || fail "$what: member not system wide"
	expect_attr "$what" 1 exclude_user 1
}

test_options() {
	local what

	what="user groups and order"
	run nopt record -v --dry-run -o "$data" -e cpu-clock -Aintel_pt \
		-e '{task-clock,page-faults}' -e minor-faults true || fail "$what: failed"
	expect_group "$what" \
		"intel_pt// leads 4 events: cpu-clock, task-clock, page-faults, minor-faults"

	what="-A alone"
	run nopt record -v --dry-run -o "$data" -A true || fail "$what: failed"
	expect_group "$what" "intel_pt// leads 1 events: cycles"

	what="terms and modifiers"
	run nopt --debug perf-event-open record -o "$data" -Aintel_pt/cyc,noretcomp/u,16384 \
		-e cycles true
	expect_attr "$what" 1 config 0xee03
	expect_attr "$what" 1 exclude_kernel 1

	what="--filter on the AUX event"
	run nopt record -vv --dry-run -o "$data" -Aintel_pt --filter 'filter 0x1000/0x100' \
		-e cycles:u true || fail "$what: failed"
	grep -q 'Address filter: filter 0x1000/0x100' "$out" || fail "$what: no address filter"

	what="--per-thread, -F, --no-inherit, leader sampling"
	run nopt record -v --dry-run -o "$data" --per-thread -F 1000 --no-inherit \
		-Aintel_pt -e '{cycles,instructions}:S' true || fail "$what: failed"
	expect_group "$what" "intel_pt// leads 2 events: cycles, instructions"

	what="--aux-sample size"
	run nopt record -v --dry-run -o "$data" --aux-sample=8192 -Aintel_pt -e cycles true ||
		fail "$what: failed"
	expect_group "$what" "intel_pt// leads 1 events: cycles; sample size 8192"
}

# No kernel has cs_etm AUX snapshots (the probe's open fails here): -Acs_etm
# records the trace in full, with timestamps, beside the sampled events.
test_cs_etm_full_trace() {
	local what="-Acs_etm without snapshot_aux"

	run nopt record -v --dry-run -o "$data" -Acs_etm -e cycles:u true ||
		fail "$what: failed"
	grep -q 'recording its trace in full, with timestamps, beside the sampled events' "$out" ||
		fail "$what: does not say it records the trace in full"
	grep -q 'AUX sampling group' "$out" && fail "$what: made an AUX sampling group"

	run nopt --debug perf-event-open record -o "$data" -Acs_etm -e cycles:u true
	[ "$(attr_of 1 type)" = "4245 (cs_etm)" ] ||
		fail "$what: the first event opened is not cs_etm"
	# format/timestamp is config:28; :u members make it trace user space only.
	[ "$(attr_of 1 config)" = 0x10000000 ] || fail "$what: timestamps are not on"
	[ "$(attr_of 1 exclude_kernel)" = 1 ] || fail "$what: it traces the kernel too"
	grep -q 'group_fd -1' "$out" || fail "$what: cs_etm is not opened on its own"
	# Windows are found in the trace of the sample's CPU: samples say which
	# (all events get the same sample bits; the members cannot be opened here).
	attr_of 1 sample_type | grep -q CPU || fail "$what: samples do not say their CPU"
}

# refused TREE ARGS WANT: perf record ARGS with SYSFS_PATH=TREE is
# refused with an error that says WANT.
refused() {
	local tree=$1 args=$2 want=$3

	# shellcheck disable=SC2086
	if run "$tree" record --dry-run -o "$data" $args true; then
		fail "'$args' was accepted"
	fi
	grep -qF -- "$want" "$out" || fail "'$args': no error saying '$want'"
}

test_errors() {
	refused nopt "-Anotaux -e cycles" \
		"-A: notaux is not an AUX area PMU (AUX area PMUs here: cs_etm, intel_pt)"
	refused nopt "-Anosuch -e cycles" "there is no 'nosuch' PMU on this machine"
	refused nopt "-Aintel_pt -Aintel_pt -e cycles" "-A may be given once"
	refused nopt "-Aintel_pt -e intel_pt//u -e cycles" "remove intel_pt//u from -e"
	refused nopt "-Aintel_pt,70000 -e cycles" "AUX area sample size 70000 too big, max. 61440"
	refused nopt "-Aintel_pt,1024 -e cycles" \
		"is below the intel_pt sync point (PSB) period of 2048 bytes"
	refused nopt "-Aintel_pt/psb_period=3/,8192 -e cycles" \
		"below the intel_pt sync point (PSB) period of 16384 bytes"
	refused nopt "-Aintel_pt,8192 --aux-sample=4096 -e cycles" \
		"-A gives the AUX sample size 8192 and --aux-sample 4096"
	refused nopt "-Aintel_pt -e {cycles,instructions}:S,branches" \
		"put all events in one {...}:S group"
	refused noaux "-A -e cycles" "Looked for: intel_pt (Intel Processor Trace)"
	refused noaux "-A -e cycles" "AUX area PMUs here: none"
	refused noaux "-A -e cycles" \
		"'perf auxsample simulate -- <command>' records the Intel PT AUX samples"
	refused noaux "-Aintel_pt -e cycles" \
		"'perf auxsample simulate -- <command>' records the Intel PT AUX samples"

	# A size that leaves room for a PSB is fine.
	run nopt record --dry-run -o "$data" -Aintel_pt/psb_period=2/,8192 -e cycles true ||
		fail "-Aintel_pt/psb_period=2/,8192 was refused"
}

test_seed_cycles
test_seed_sched
test_members
test_options
test_cs_etm_full_trace
test_errors
exit $err
