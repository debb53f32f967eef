#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What our shell tests share (perf auxsample's, perf record -A's,
# persistent events' and the attr<index> formats'): their temporary
# directory, its removal however they end, and how they report a failure.
# shellcheck disable=SC2154 # tmp and out are the sourcing test's

# auxsample_test_traps: the test's temporary directory $tmp goes when
# the test ends, also on SIGTERM and SIGINT.  A test with more to undo
# defines auxsample_test_undo.  (The tests assign err, tmp and out
# themselves, where perf's build-time shellcheck sees them.)
auxsample_test_traps() {
	trap 'auxsample_test_cleanup; exit 1' TERM INT
	trap auxsample_test_cleanup EXIT
}

auxsample_test_cleanup() {
	if declare -F auxsample_test_undo > /dev/null; then
		auxsample_test_undo
	fi
	rm -rf "$tmp"
	trap - EXIT TERM INT
}

# fail WHY: say so with the start of $out; the test exits 1 at its end.
fail() {
	echo "FAIL: $*"
	head -c 3000 "$out"
	# shellcheck disable=SC2034 # the test's exit status
	err=1
}

# killed RC: whether exit status RC says that a signal killed perf
# (128 + N).  perf itself exits 129 on a usage error: not a signal.
killed() {
	[ "$1" -gt 129 ] && [ "$1" -le 192 ]
}

# brstack_from_to [FILE]: perf script -F ip,brstack lines with each
# branch entry cut to its from/to, which every perf version prints alike.
brstack_from_to() {
	awk '{
		printf "%s", $1
		for (i = 2; i <= NF; i++) {
			split($i, f, "/")
			printf " %s/%s", f[1], f[2]
		}
		print ""
	}' "$@"
}
