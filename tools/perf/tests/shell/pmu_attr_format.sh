#!/bin/bash
# PMU attr<index> formats on a fake sysfs persistent PMU
# SPDX-License-Identifier: GPL-2.0
#
# A fake sysfs tree (SYSFS_PATH) holds a 'persistent' PMU laid out as the
# persistent events ABI has it: format/persistent = attr5:23 and
# events/mce_record = persistent,config=106.  The attr of whole perf
# commands is read from 'perf --debug perf-event-open', which shows every
# open attempt; opening the made-up PMU type fails, as it should.

set -u

# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
err=0
tmp=$(mktemp -d /tmp/__perf_test.pmu_attr_format.XXXXX)
fake=$tmp/sysfs
devices=$fake/bus/event_source/devices
out=$tmp/out
data=$tmp/perf.data
auxsample_test_traps

# PMU types no kernel hands out, so that nothing real is opened.
type=4242
bad_type=4243

make_pmu() {
	local dir=$devices/$1

	mkdir -p "$dir/format" "$dir/events"
	echo "$2" > "$dir/type"
	shift 2
	while [ $# -gt 0 ]; do
		echo "$2" > "$dir/$1"
		shift 2
	done
}

make_pmu persistent $type format/persistent attr5:23 format/inh attr5:1 \
	format/wakeup attr6:0-31 events/mce_record persistent,config=106
make_pmu badpmu $bad_type format/zero attr0:0-7 format/past attr17:0 format/ok attr6:0-3

# fail WHY: the library's, with all of $out between rules.
fail() {
	echo "FAIL: $*"
	echo "---- output ----"
	cat "$out"
	echo "----------------"
	err=1
}

# perf_fake ARGS...: perf on the fake sysfs, its output in $out; its exit
# status, and a failure if a signal killed it.
perf_fake() {
	local rc

	SYSFS_PATH=$fake perf "$@" > "$out" 2>&1
	rc=$?
	killed $rc && fail "perf $*: killed by signal $((rc - 128))"
	return $rc
}

# The value printed for an attr field in the dump of the persistent event.
attr_field() {
	awk -v f="$1" -v t="$type" '
		/^perf_event_attr:/ { inpmu = 0 }
		$1 == "type" && $2 == t { inpmu = 1 }
		inpmu && $1 == f { print $2; exit }' "$out"
}

expect_field() {
	local cmd=$1 field=$2 want=$3 got

	got=$(attr_field "$field")
	[ "$got" = "$want" ] || fail "$cmd: $field is '$got', expected '$want'"
}

test_list() {
	perf_fake list pmu
	grep -q 'persistent/mce_record/' "$out" || fail "perf list lacks persistent/mce_record/"
}

test_stat() {
	perf_fake --debug perf-event-open stat -e persistent/mce_record/ true
	expect_field stat config 0x6a
	expect_field stat mmap2 1

	# perf stat's own setup must not undo the format's bits.
	perf_fake --debug perf-event-open stat --no-inherit -e persistent/inh=1/ true
	expect_field "stat --no-inherit" inherit 1
}

test_record() {
	# cpu-clock comes first and is the tracking event, so record's setup
	# gives mmap2 to it alone: the persistent event has it from its format.
	if perf_fake --debug perf-event-open record -o "$data" -e cpu-clock \
			-e persistent/mce_record,wakeup=5/ true; then
		fail "record opened a PMU that does not exist"
	fi
	expect_field record config 0x6a
	expect_field record mmap2 1
	grep -q 'wakeup_events, wakeup_watermark } 5' "$out" ||
		fail "record: wakeup_events is not 5"

	perf_fake record -vv -o "$data" -e cpu-clock -e persistent/mce_record/ true
	expect_field "record -vv" mmap2 1
}

test_errors() {
	local spec want

	while IFS='|' read -r spec want; do
		if perf_fake stat -e "$spec" true; then
			fail "'$spec' was accepted"
		fi
		grep -qF -- "$want" "$out" || fail "'$spec': no error saying '$want'"
	done <<-EOT
	badpmu/zero=1/|attr0 holds the type and size of struct perf_event_attr
	badpmu/zero=1/|PMU 'badpmu' format 'zero' ($devices/badpmu/format/zero)
	badpmu/past=1/|attr17 is past the end of struct perf_event_attr
	badpmu/ok=16/|value too big for format (ok), maximum is 15
	persistent/persistent=2/|value too big for format (persistent), maximum is 1
	EOT

	# A PMU with invalid formats is still usable through its valid ones.
	perf_fake --debug perf-event-open stat -e badpmu/ok=9/ true
	grep -q "WARNING: PMU 'badpmu' format 'past'" "$out" ||
		fail "no warning about badpmu's invalid format"
}

test_list
test_stat
test_record
test_errors
exit $err
