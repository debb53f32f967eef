#!/bin/bash
# perf auxsample: the Intel PT walker decodes as libipt does
# SPDX-License-Identifier: GPL-2.0
#
# Simulated Intel PT recordings of the test program, decoded by
# libauxsample's own walker (--decoder=walker) and by libipt's block
# decoder, the reference: perf auxsample script and stat print the same,
# sample for sample (with CYC, cycles too), and the walker decodes most
# snippets itself.

set -u

# shellcheck source=lib/auxsample_sim.sh
. "$(dirname "$0")"/lib/auxsample_sim.sh
# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
auxsample_sim_check

err=0
tmp=$(mktemp -d /tmp/__perf_test.auxsample_walker.XXXXX)
data=$tmp/perf.data
out=$tmp/out
auxsample_test_traps

auxsample_sim_workload "$tmp/workload" "$out"

# decode DECODER [OPTIONS]: script and stat of $data as DECODER decodes
# it, in $tmp/DECODER.script and $tmp/DECODER.stat.
decode() {
	local decoder=$1 rc

	shift
	perf auxsample script -i "$data" --decoder="$decoder" "$@" > "$tmp/$decoder.script" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		cp "$tmp/$decoder.script" "$out"
		fail "$what: perf auxsample script --decoder=$decoder exited $rc"
		return 1
	fi
	perf auxsample stat -i "$data" --decoder="$decoder" "$@" > "$tmp/$decoder.stat" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		cp "$tmp/$decoder.stat" "$out"
		fail "$what: perf auxsample stat --decoder=$decoder exited $rc"
		return 1
	fi
}

# check WHAT SIMULATE-OPTIONS -- COMMAND
check() {
	local what=$1 samples fallbacks

	shift
	if ! perf auxsample simulate -o "$data" "$@" > "$out" 2>&1; then
		fail "$what: simulate failed"
		return
	fi
	for reuse in --no-reuse --reuse; do
		decode libipt "$reuse" -j 1 || return
		decode walker "$reuse" -j 1 || return
		if ! cmp -s "$tmp/libipt.script" "$tmp/walker.script"; then
			diff "$tmp/libipt.script" "$tmp/walker.script" > "$out"
			fail "$what ($reuse): the walker's branches are not libipt's"
			return
		fi
		grep -v -e 'snippets the walker handed to libipt' \
			-e 'basic blocks the walker decoded' "$tmp/walker.stat" > "$out"
		if ! cmp -s "$tmp/libipt.stat" "$out"; then
			diff "$tmp/libipt.stat" "$out" > "$tmp/diff"
			cp "$tmp/diff" "$out"
			fail "$what ($reuse): the walker's statistics are not libipt's"
			return
		fi
	done
	# Without streams every snippet is decoded alone: the walker's own.
	decode walker --no-reuse -j 1 || return
	samples=$(awk 'NR == 1 { print $1 }' "$tmp/walker.stat")
	fallbacks=$(awk '/snippets the walker handed to libipt/ { print $1 }' "$tmp/walker.stat")
	blocks=$(awk '/basic blocks the walker decoded/ { print $1 }' "$tmp/walker.stat")
	echo "$what: $samples samples alike, $fallbacks handed to libipt, $blocks blocks decoded"
	# What the walker walked, it walked on blocks it decoded.
	if [ -n "$fallbacks" ] && [ "$fallbacks" -lt "$samples" ] && [ "${blocks:-0}" -eq 0 ]; then
		cp "$tmp/walker.stat" "$out"
		fail "$what: the walker walked without decoding a block"
		return
	fi
	if [ -z "$fallbacks" ] || [ "$samples" -eq 0 ]; then
		cp "$tmp/walker.stat" "$out"
		fail "$what: no walker statistics"
	elif [ "$fallbacks" -ge "$samples" ]; then
		cp "$tmp/walker.stat" "$out"
		fail "$what: the walker decoded no snippet itself"
	fi
}

wl=$tmp/workload
check "branches, calls, jump table, recursion" -c 700 -- "$wl" branches 40
check "setjmp/longjmp" -c 700 -- "$wl" longjmp 20
check "signal handler" -c 700 -- "$wl" signal 20
check "syscall loop" -c 700 -- "$wl" syscalls 40
check "two threads" -c 700 -- "$wl" threads 20
check "no return compression" --noretcomp -c 700 -- "$wl" branches 40
check "PSB every 512 bytes, 8K samples" --psb-period 512 --aux-sample-size 8K \
	-c 700 -- "$wl" branches 40
# Cycles too, entry for entry (pt-cyc.c times both decoders' branches).
check "CYC timing" --cyc -c 700 -- "$wl" branches 20
check "CYC and MTC, two threads" --cyc --mtc -c 700 -- "$wl" threads 20
check "CYC, signal handler" --cyc -c 700 -- "$wl" signal 20

# A decoder perf does not have is refused, in perf's voice.
perf auxsample script -i "$data" --decoder=nope > "$out" 2>&1
rc=$?
if killed $rc || [ $rc -eq 0 ] || ! grep -q 'not an Intel PT decoder' "$out"; then
	fail "--decoder=nope: exit $rc"
fi

# Without --decoder, the config variable auxsample.decoder chooses;
# --decoder wins over it, and a decoder perf does not have is a warning.
printf '[auxsample]\n\tdecoder = walker\n' > "$tmp/perfconfig"
PERF_CONFIG=$tmp/perfconfig perf auxsample stat -i "$data" > "$out" 2>&1
grep -q 'snippets the walker handed to libipt' "$out" ||
	fail "auxsample.decoder=walker: stat did not use the walker"
PERF_CONFIG=$tmp/perfconfig perf auxsample stat -i "$data" --decoder=libipt > "$out" 2>&1
grep -q 'snippets the walker handed to libipt' "$out" &&
	fail "--decoder=libipt under auxsample.decoder=walker: stat used the walker"
printf '[auxsample]\n\tdecoder = nope\n' > "$tmp/perfconfig"
PERF_CONFIG=$tmp/perfconfig perf auxsample stat -i "$data" > "$out" 2>&1
rc=$?
if killed $rc || [ $rc -ne 0 ] || ! grep -q 'auxsample.decoder=nope is not' "$out"; then
	fail "auxsample.decoder=nope: exit $rc, or no warning"
fi

exit $err
