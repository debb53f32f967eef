#!/bin/bash
# perf auxsample: the Intel PT walker decodes as libipt does
# SPDX-License-Identifier: GPL-2.0
#
# Simulated Intel PT recordings of the test program, decoded by
# libauxsample's own walker (the default decoder) and by libipt's block
# decoder, the reference (--decoder=libipt): perf auxsample script and
# stat print the same, sample for sample (with CYC, cycles too), and the
# walker decodes most snippets itself, every one where the kernel is
# traced too; perf auxsample report and inject and perf report give the
# same output with either decoder.

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

fallbacks_line='snippets decoded by libipt: the walker does not handle them'

# decoder_opt DECODER: the option that chooses DECODER, none for the
# walker, the default.
decoder_opt() {
	[ "$1" = libipt ] && echo --decoder=libipt
}

# decode DECODER [OPTIONS]: script and stat of $data as DECODER decodes
# it, in $tmp/DECODER.script and $tmp/DECODER.stat.
decode() {
	local decoder=$1 rc

	shift
	# shellcheck disable=SC2046
	perf auxsample script -i "$data" $(decoder_opt "$decoder") "$@" \
		> "$tmp/$decoder.script" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		cp "$tmp/$decoder.script" "$out"
		fail "$what: perf auxsample script with the $decoder exited $rc"
		return 1
	fi
	# shellcheck disable=SC2046
	perf auxsample stat -i "$data" $(decoder_opt "$decoder") "$@" > "$tmp/$decoder.stat" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		cp "$tmp/$decoder.stat" "$out"
		fail "$what: perf auxsample stat with the $decoder exited $rc"
		return 1
	fi
}

# same WHAT NAME: $tmp/libipt.NAME and $tmp/walker.NAME are the same.
same() {
	if ! cmp -s "$tmp/libipt.$2" "$tmp/walker.$2"; then
		diff "$tmp/libipt.$2" "$tmp/walker.$2" > "$tmp/diff"
		cp "$tmp/diff" "$out"
		fail "$1: the walker's output is not libipt's"
		return 1
	fi
}

# commands WHAT: perf auxsample report and inject, and perf report, of
# $data with each decoder, perf report's chosen by auxsample.decoder.
commands() {
	local what=$1 decoder

	for decoder in libipt walker; do
		printf '[auxsample]\n\tdecoder = %s\n' "$decoder" > "$tmp/$decoder.config"
		# shellcheck disable=SC2046
		perf auxsample report -i "$data" $(decoder_opt "$decoder") --no-reuse -j 1 \
			> "$tmp/$decoder.report" 2> "$out" ||
			fail "$what: perf auxsample report with the $decoder failed"
		# shellcheck disable=SC2046
		perf auxsample inject -f -i "$data" $(decoder_opt "$decoder") -g -j 1 \
			-o "$tmp/$decoder.data" > "$out" 2>&1 ||
			fail "$what: perf auxsample inject with the $decoder failed"
		perf script -F ip,brstack -i "$tmp/$decoder.data" \
			> "$tmp/$decoder.inject" 2> /dev/null
		PERF_CONFIG=$tmp/$decoder.config perf report -i "$data" --stdio --no-children \
			> "$tmp/$decoder.perf-report" 2> /dev/null ||
			fail "$what: perf report with auxsample.decoder=$decoder failed"
		PERF_CONFIG=$tmp/$decoder.config perf report -i "$data" --stdio -b \
			--sort symbol_from,symbol_to > "$tmp/$decoder.perf-report-b" 2> /dev/null ||
			fail "$what: perf report -b with auxsample.decoder=$decoder failed"
	done
	[ -s "$tmp/walker.inject" ] || fail "$what: perf script shows nothing of inject's file"
	grep -q '[0-9]%' "$tmp/walker.perf-report-b" ||
		fail "$what: perf report -b shows no branches"
	same "$what: perf auxsample report" report &&
	same "$what: perf auxsample inject" inject &&
	same "$what: perf report" perf-report &&
	same "$what: perf report -b" perf-report-b
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
		grep -v "$fallbacks_line" "$tmp/walker.stat" > "$out"
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
	fallbacks=$(grep "$fallbacks_line" "$tmp/walker.stat" | awk '{ print $1 }')
	perf auxsample stat -v -i "$data" --no-reuse -j 1 > "$tmp/walker.statv" 2>&1
	blocks=$(awk '/basic blocks the walker decoded/ { print $1 }' "$tmp/walker.statv")
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

# check_kernel WHAT SIMULATE-OPTIONS -- COMMAND: check with the kernel
# traced too (--kernel: the simulator's kernel, its image in the build-id
# cache of a private HOME), syscalls and interrupts far branches and
# asynchronous events in traced code: every snippet the walker's own.
check_kernel() {
	local what=$1 fallbacks

	shift
	mkdir -p "$tmp/home"
	HOME=$tmp/home check "$what" --kernel "$@"
	fallbacks=$(grep "$fallbacks_line" "$tmp/walker.stat" | awk '{ print $1 }')
	if [ "${fallbacks:-}" != 0 ]; then
		cp "$tmp/walker.stat" "$out"
		fail "$what: the walker handed ${fallbacks:-?} kernel snippets to libipt"
	fi
}

wl=$tmp/workload
check "branches, calls, jump table, recursion" -c 700 -- "$wl" branches 40
check_kernel "kernel traced" -c 700 -- "$wl" branches 40
check_kernel "kernel traced, periods ending on syscalls" -c 97 -- "$wl" syscalls 60
check_kernel "kernel traced, CYC" --cyc -c 700 -- "$wl" signal 20
# Snippets that hardly overlap: perf report and inject decode them one by
# one, with the walker (overlapping ones go to libipt's streams).
if perf auxsample simulate -o "$data" -c 20000 --aux-sample-size 2K --psb-period 512 \
	-- "$wl" branches 4000 > "$out" 2>&1; then
	commands "sparse snippets"
else
	fail "sparse snippets: simulate failed"
fi
check "setjmp/longjmp" -c 700 -- "$wl" longjmp 20
check "signal handler" -c 700 -- "$wl" signal 20
commands "signal handler"
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

# The walker is the default, --decoder=walker names it; stat says how
# many snippets it left to libipt, and nothing of it under libipt.
perf auxsample stat -i "$data" > "$out" 2>&1
grep -q "$fallbacks_line" "$out" || fail "stat without --decoder did not use the walker"
perf auxsample stat -i "$data" --decoder=walker > "$out" 2>&1
grep -q "$fallbacks_line" "$out" || fail "--decoder=walker: stat did not use the walker"
perf auxsample stat -i "$data" --decoder=libipt > "$out" 2>&1
grep -q "$fallbacks_line" "$out" && fail "--decoder=libipt: stat used the walker"

# Without --decoder, the config variable auxsample.decoder chooses;
# --decoder wins over it, and a decoder perf does not have is a warning.
printf '[auxsample]\n\tdecoder = libipt\n' > "$tmp/perfconfig"
PERF_CONFIG=$tmp/perfconfig perf auxsample stat -i "$data" > "$out" 2>&1
grep -q "$fallbacks_line" "$out" &&
	fail "auxsample.decoder=libipt: stat used the walker"
PERF_CONFIG=$tmp/perfconfig perf auxsample stat -i "$data" --decoder=walker > "$out" 2>&1
grep -q "$fallbacks_line" "$out" ||
	fail "--decoder=walker under auxsample.decoder=libipt: stat did not use the walker"
printf '[auxsample]\n\tdecoder = nope\n' > "$tmp/perfconfig"
PERF_CONFIG=$tmp/perfconfig perf auxsample stat -i "$data" > "$out" 2>&1
rc=$?
if killed $rc || [ $rc -ne 0 ] || ! grep -q 'auxsample.decoder=nope is not' "$out"; then
	fail "auxsample.decoder=nope: exit $rc, or no warning"
fi

exit $err
