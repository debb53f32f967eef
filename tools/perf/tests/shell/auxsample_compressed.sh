#!/bin/bash
# perf auxsample: files that perf record -z compressed read as the plain ones
# SPDX-License-Identifier: GPL-2.0
#
# perf record -z packs the events into PERF_RECORD_COMPRESSED records
# (zstd), but not AUXTRACE and its trace.  lib/auxsample_compress.py
# packs simulated recordings so, as perf record -z would have written
# them.  Every command must then give what it gives for the plain file,
# byte for byte: perf auxsample script (text and JSON), stat, report,
# inject (and perf script of its output), and perf report, on AUX
# samples and on samples beside a full trace.  Overlapping snippets
# must still be decoded once (the first look that finds them reads the
# compressed records too): the -v count of samples decoded from streams
# is the plain file's, and not zero.

set -u

# shellcheck source=lib/auxsample_sim.sh
. "$(dirname "$0")"/lib/auxsample_sim.sh
# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
auxsample_sim_check

err=0
tmp=$(mktemp -d /tmp/__perf_test.auxsample_compressed.XXXXX)
out=$tmp/out
auxsample_test_traps

if ! perf version --build-options | grep -q 'zstd: \[ on'; then
	echo "Skip: perf built without zstd: it reads no compressed perf.data"
	exit 2
fi
if ! command -v zstd > /dev/null; then
	echo "Skip: no zstd program to compress the test's recordings"
	exit 2
fi

auxsample_sim_workload "$tmp/wl" "$out"
lib=$(dirname "$0")/lib

# record NAME SIMULATE-OPTIONS: $tmp/NAME.data and $tmp/NAME-z.data, compressed.
record() {
	local name=$1

	shift
	if ! perf auxsample simulate -o "$tmp/$name.data" "$@" > "$out" 2>&1; then
		fail "$name: simulate $*"
		return 1
	fi
	if ! python3 "$lib/auxsample_compress.py" "$tmp/$name.data" "$tmp/$name-z.data" \
			> "$out" 2>&1; then
		fail "$name: compressing it failed"
		return 1
	fi
	perf report --header-only -i "$tmp/$name-z.data" > "$out" 2>&1
	if ! grep -q '^# compressed : Zstd' "$out"; then
		fail "$name: the compressed file has no HEADER_COMPRESSED"
		return 1
	fi
}

# same NAME WHAT COMMAND...: COMMAND (with -i FILE added) gives the same
# standard output and status on NAME's plain and compressed files.
same() {
	local name=$1 what=$2 f rc_plain rc_z

	shift 2
	"$@" -i "$tmp/$name.data" > "$tmp/plain.out" 2> "$out"
	rc_plain=$?
	"$@" -i "$tmp/$name-z.data" > "$tmp/z.out" 2> "$out"
	rc_z=$?
	for f in plain z; do
		if killed "$(eval echo "\$rc_$f")"; then
			fail "$name: $what on the $f file: killed by a signal"
			return
		fi
	done
	if [ "$rc_plain" != "$rc_z" ]; then
		fail "$name: $what: exit status $rc_z compressed, $rc_plain plain"
	elif ! cmp -s "$tmp/plain.out" "$tmp/z.out"; then
		diff "$tmp/plain.out" "$tmp/z.out" | head -5 > "$out"
		fail "$name: $what: the compressed file's output differs"
	elif [ ! -s "$tmp/plain.out" ]; then
		fail "$name: $what: no output"
	fi
}

# streamed FILE: how many samples perf auxsample script decoded from streams.
streamed() {
	perf auxsample script -v -j 1 -i "$1" 2>&1 > /dev/null |
		sed -n 's/^auxsample streams: \([0-9]*\) samples decoded from them$/\1/p'
}

# injected NAME: perf script of what perf auxsample inject writes.
injected() {
	local name=$1 f

	for f in "" -z; do
		if ! perf auxsample inject -j 1 -i "$tmp/$name$f.data" \
				-o "$tmp/$name-inj$f.data" > "$out" 2>&1; then
			fail "$name$f: perf auxsample inject failed"
			return
		fi
	done
	same "$name-inj" "perf script of the injected" perf script -F ip,brstack,sym
}

# 'dense': a sample every 200 instructions, whose snippets overlap.
if record dense --no-tsc -c 200 -- "$tmp/wl" branches 10; then
	plain=$(streamed "$tmp/dense.data")
	z=$(streamed "$tmp/dense-z.data")
	echo "from streams: $plain samples of the plain file, $z of the compressed one" > "$out"
	if [ -z "$plain" ] || [ "$plain" = 0 ]; then
		fail "dense: no sample decoded from a stream of the plain file"
	elif [ "$z" != "$plain" ]; then
		fail "dense: ${z:-no} samples streamed from the compressed file, $plain plain"
	fi
	same dense "script" perf auxsample script -j 1
	same dense "script -j 2" perf auxsample script -j 2
	same dense "script --json" perf auxsample script -j 1 --json
	same dense "stat" perf auxsample stat
	same dense "report" perf auxsample report -j 1 -n 0
	same dense "report --json" perf auxsample report -j 1 -n 0 --json
	same dense "perf report" perf report --stdio --sort sym
	injected dense
fi

# 'full': samples beside a full trace, whose AUXTRACE stays uncompressed.
if record full --full-trace -c 700 -- "$tmp/wl" branches 20; then
	same full "script" perf auxsample script -j 1
	same full "stat" perf auxsample stat
	same full "report" perf auxsample report -j 1 -n 0
	same full "perf report" perf report --stdio --sort sym
fi

[ $err = 0 ] && echo "perf record -z files: every command's output is the plain file's"
exit $err
