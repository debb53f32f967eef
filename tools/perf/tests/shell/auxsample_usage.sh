#!/bin/bash
# perf auxsample: first steps, from its usage to its option errors
# SPDX-License-Identifier: GPL-2.0
#
# What a new user meets before any trace is decoded: bare perf auxsample
# says what each command is for, and options that would decode for
# nothing are refused with a message, not accepted silently.  None of it
# reads a perf.data file, so the input named is one that does not exist.

set -u

# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
err=0
tmp=$(mktemp -d /tmp/__perf_test.auxsample_usage.XXXXX)
out=$tmp/out
auxsample_test_traps

fail() {
	echo "FAIL: $*"
	echo "---- output ----"
	head -c 4000 "$out"
	echo "----------------"
	err=1
}

# run ARGS...: perf's status, and its output in $out.  A signal is a
# failure of the test, never an answer.
run() {
	local rc

	perf "$@" > "$out" 2>&1
	rc=$?
	killed "$rc" && fail "'perf $*' died of signal $((rc - 128))"
	return "$rc"
}

test_usage() {
	local cmd

	run auxsample && fail "bare 'perf auxsample' exited 0"
	for cmd in script stat inject report simulate; do
		# A line for each command, with a word on what it is for.
		grep -Eq "^ +$cmd +[a-z'].{20,}" "$out" ||
			fail "bare 'perf auxsample' does not say what $cmd is for"
	done
	grep -q "perf help auxsample" "$out" ||
		fail "bare 'perf auxsample' does not point to its manual"
}

test_depth() {
	local cmd

	for cmd in script stat report "inject -o $tmp/out.data"; do
		# shellcheck disable=SC2086
		run auxsample $cmd --depth 0 -i "$tmp/none.data" &&
			fail "'$cmd --depth 0' was accepted"
		grep -q -- "--depth must be at least 1" "$out" ||
			fail "'$cmd --depth 0': no error saying --depth must be at least 1"
	done
	[ -e "$tmp/out.data" ] && fail "inject --depth 0 left an output file"
}

test_usage
test_depth
exit $err
