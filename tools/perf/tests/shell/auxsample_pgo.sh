#!/bin/bash
# perf auxsample: BOLT and AutoFDO from the virtual LBR
# SPDX-License-Identifier: GPL-2.0
#
# The virtual LBR's point is what people feed it to.  A small program is
# simulated (Intel PT AUX samples), injected as LBR data, and given to
# the stock tools as their documentation says (perf-auxsample(1) has the
# same commands):
#   BOLT: perf2bolt, without -ignore-build-id, then llvm-bolt; the
#     optimised binary gives the same output.  The profile agrees with
#     the one built from the simulator's true branches, and inject --bolt
#     (perf2bolt --pa) gives the very same profile as perf2bolt's own
#     reading of the injected file, also through Debian's older perf.
#   AutoFDO: llvm-profgen on perf script's output, then clang
#     -fprofile-sample-use; the profile's hottest functions are the
#     program's hot ones, and inject --autofdo's counts are llvm-profgen's.
# The LLVM tools are Debian's bolt-16, llvm-16 and clang-16
# (AUXSAMPLE_LLVM names another directory of them).

set -u

# shellcheck source=lib/auxsample_sim.sh
. "$(dirname "$0")"/lib/auxsample_sim.sh
auxsample_sim_check

lib=$(cd "$(dirname "$0")"/lib && pwd)
llvm=${AUXSAMPLE_LLVM:-/usr/lib/llvm-16/bin}
bolt=1
autofdo=1
for tool in perf2bolt llvm-bolt; do
	[ -x "$llvm/$tool" ] || bolt=
done
for tool in llvm-profgen llvm-profdata clang; do
	[ -x "$llvm/$tool" ] || autofdo=
done
if [ -z "$bolt$autofdo" ]; then
	echo "Skip: no perf2bolt, llvm-bolt (bolt-16), llvm-profgen (llvm-16)" \
	     "nor clang (clang-16) in $llvm"
	exit 2
fi
[ -n "$bolt" ] || echo "BOLT not checked: no perf2bolt and llvm-bolt (bolt-16) in $llvm"
[ -n "$autofdo" ] ||
	echo "AutoFDO not checked: no llvm-profgen, llvm-profdata and clang" \
	     "(llvm-16, clang-16) in $llvm"

# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
err=0
tmp=$(mktemp -d /tmp/__perf_test.auxsample_pgo.XXXXX)
out=$tmp/out
auxsample_test_traps

# killed RC: whether exit status RC says that a signal killed the command.
killed() {
	[ "$1" -gt 128 ] && [ "$1" -le 192 ]
}

# The program: static (what the simulator runs quickly), with relocations
# (what llvm-bolt needs to move functions) and line tables (llvm-profgen).
# About 330k instructions: 10 to 30 s of single-stepping.
wl=$tmp/pgo
rounds=8000
cc=cc
debug=-g
if [ -n "$autofdo" ]; then
	cc=$llvm/clang
	debug="-g -fdebug-info-for-profiling"
fi
# shellcheck disable=SC2086
if ! $cc -O2 $debug -static -Wl,--emit-relocs -o "$wl" "$lib/auxsample_pgo.c" > "$out" 2>&1; then
	echo "Skip: cannot build a static test program (no static libc?)"
	cat "$out"
	exit 2
fi
want=$("$wl" $rounds)

data=$tmp/perf.data
injected=$tmp/injected.data
perf auxsample simulate -o "$data" -c 1000 -- "$wl" $rounds > "$out" 2>&1 || fail "simulate failed"
perf auxsample inject -i "$data" -o "$injected" > "$out" 2>&1 || fail "inject failed"

if [ -n "$bolt" ]; then
	# perf2bolt runs the perf on PATH: ours, then Debian's 6.1 if there.
	if ! "$llvm/perf2bolt" -p "$injected" -o "$tmp/perf.fdata" "$wl" > "$out" 2>&1; then
		fail "perf2bolt refused the injected file"
	else
		grep -q 'matched build-id and file name' "$out" ||
			fail "perf2bolt: no build-id match"
		grep 'PERF2BOLT: read .* LBR entries' "$out"
		grep 'PERF2BOLT: traces mismatching' "$out"
	fi

	# --bolt: the same profile without perf script.
	perf auxsample inject --bolt "$wl" -i "$data" -o "$tmp/bolt.pa" > "$out" 2>&1 ||
		fail "inject --bolt failed"
	"$llvm/perf2bolt" --pa -p "$tmp/bolt.pa" -o "$tmp/pa.fdata" "$wl" > "$out" 2>&1 ||
		fail "perf2bolt --pa refused inject --bolt's profile"
	sort "$tmp/perf.fdata" > "$tmp/perf.sorted"
	sort "$tmp/pa.fdata" > "$tmp/pa.sorted"
	if cmp -s "$tmp/perf.sorted" "$tmp/pa.sorted" && [ -s "$tmp/pa.sorted" ]; then
		lines=$(wc -l < "$tmp/pa.sorted")
		echo "inject --bolt: the same $lines fdata lines as perf2bolt from the perf.data"
	else
		fail "inject --bolt: another profile than perf2bolt reads from the perf.data"
		diff "$tmp/perf.sorted" "$tmp/pa.sorted" | head -10
	fi

	# Against the true branches, summed up by perf2bolt's rules.
	python3 "$lib/auxsample_pgo.py" truth-pa "$data" "$wl" 64 > "$tmp/truth.pa" 2> "$out" ||
		fail "no profile from the truth"
	"$llvm/perf2bolt" --pa -p "$tmp/truth.pa" -o "$tmp/truth.fdata" "$wl" > "$out" 2>&1 ||
		fail "perf2bolt --pa refused the truth's profile"
	agree=$(python3 "$lib/auxsample_pgo.py" agree "$tmp/truth.fdata" "$tmp/perf.fdata" \
		2> "$out")
	echo "BOLT profile against the truth: ${agree:-?}% of the counts agree"
	awk -v a="${agree:-0}" 'BEGIN { exit !(a >= 99) }' ||
		fail "BOLT profile: only ${agree:-?}% agrees with the truth's"

	# Debian's perf 6.1 under perf2bolt: the same profile.
	old_perf=${AUXSAMPLE_OLD_PERF:-/usr/bin/perf}
	if [ -x "$old_perf" ] && [ "$("$old_perf" --version)" != "$(perf --version)" ]; then
		mkdir "$tmp/old"
		ln -s "$old_perf" "$tmp/old/perf"
		PATH=$tmp/old:$PATH "$llvm/perf2bolt" -p "$injected" -o "$tmp/old.fdata" "$wl" \
			> "$out" 2>&1 ||
			fail "perf2bolt with $("$old_perf" --version) refused the injected file"
		sort "$tmp/old.fdata" | cmp -s - "$tmp/perf.sorted" ||
			fail "perf2bolt with $("$old_perf" --version): another profile"
		echo "perf2bolt with $("$old_perf" --version): the same profile"
	fi

	# llvm-bolt lays the program out anew, and it still works.
	"$llvm/llvm-bolt" "$wl" -o "$tmp/pgo.bolt" -data="$tmp/perf.fdata" \
		-reorder-blocks=ext-tsp -reorder-functions=hfsort > "$out" 2>&1 ||
		fail "llvm-bolt failed"
	grep -q 'basic block reordering modified layout of [1-9]' "$out" ||
		fail "llvm-bolt changed no layout"
	grep 'modified layout' "$out"
	got=$("$tmp/pgo.bolt" $rounds 2> /dev/null)
	rc=$?
	[ $rc -eq 0 ] && [ "$got" = "$want" ] ||
		fail "the optimised program prints '$got' (exit $rc), not '$want'"

	# Errors: a binary that no branch touched.
	perf auxsample inject --bolt /no/such/binary -i "$data" -o "$tmp/none.pa" > "$out" 2>&1
	rc=$?
	killed $rc && fail "inject --bolt /no/such/binary: killed by signal $((rc - 128))"
	[ $rc -ne 0 ] || fail "inject --bolt /no/such/binary: accepted"
	grep -q 'no branch of .* has an end in /no/such/binary' "$out" ||
		fail "inject --bolt /no/such/binary: no clear error"
	[ -e "$tmp/none.pa" ] && fail "inject --bolt /no/such/binary: output left behind"
fi

if [ -n "$autofdo" ]; then
	# llvm-profgen reads perf script's branch stacks and mmaps.
	perf script -i "$injected" -F ip,brstack --show-mmap-events \
		> "$tmp/perf.script" 2> "$out" ||
		fail "perf script failed"
	"$llvm/llvm-profgen" --perfscript="$tmp/perf.script" --binary="$wl" \
		--output="$tmp/pgo.prof" > "$out" 2>&1 || fail "llvm-profgen failed"
	"$llvm/llvm-profdata" show --sample "$tmp/pgo.prof" > "$tmp/show" 2> "$out" ||
		fail "llvm-profdata cannot read the profile"
	python3 "$lib/auxsample_pgo.py" hot "$tmp/show" main hot_mix hot_step > "$out" 2>&1 ||
		fail "the profile's hottest functions are not the program's"
	cat "$out"
	"$llvm/clang" -O2 -fprofile-sample-use="$tmp/pgo.prof" -static -o "$tmp/pgo.afdo" \
		"$lib/auxsample_pgo.c" > "$out" 2>&1 || fail "clang -fprofile-sample-use failed"
	got=$("$tmp/pgo.afdo" $rounds 2> /dev/null)
	[ "$got" = "$want" ] || fail "the program built with the profile prints '$got', not '$want'"

	# --autofdo: simpleperf's text, with llvm-profgen's counts.
	perf auxsample inject --autofdo -i "$data" -o "$tmp/pgo.afdo.txt" > "$out" 2>&1 ||
		fail "inject --autofdo failed"
	"$llvm/llvm-profgen" --perfscript="$tmp/perf.script" --binary="$wl" --skip-symbolization \
		--output="$tmp/unsymbolized" > "$out" 2>&1 ||
		fail "llvm-profgen --skip-symbolization failed"
	python3 "$lib/auxsample_pgo.py" autofdo "$tmp/pgo.afdo.txt" "$wl" "$tmp/unsymbolized" \
		> "$out" 2>&1 || fail "inject --autofdo: other counts than llvm-profgen's"
	cat "$out"
	grep -q "^// build_id: 0x$(perf buildid-list -i "$injected" 2> /dev/null |
				     awk -v p="$wl" '$2 == p { print $1 }')" "$tmp/pgo.afdo.txt" ||
		fail "inject --autofdo: not the program's build-id"
fi
exit $err
