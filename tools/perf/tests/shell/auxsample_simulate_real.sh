#!/bin/bash
# perf auxsample simulate: truth on programs no one here wrote
# SPDX-License-Identifier: GPL-2.0
#
# Real programs, simulated with the default options (the Valgrind engine):
# Python's json, gzip of 100 KB, ls -l /usr/bin, an SQLite query and sort
# of 10,000 lines, tens of millions of instructions and tens of thousands
# of samples each.  For each: perf's own Intel PT decoder reads every
# sample without an error (--itrace=e), perf auxsample script's virtual
# LBR is the ground truth on every sample at depth 64 and 1024, and perf's
# own (--itrace=L64) is the truth too, as it is at perf record's default
# timing.  It takes 7 to 10 minutes on a 2-core VM: 'make check-long' runs
# it, not 'make check' (see README).

set -u

# shellcheck source=lib/auxsample_sim.sh
. "$(dirname "$0")"/lib/auxsample_sim.sh
auxsample_sim_check

# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
err=0
tmp=$(mktemp -d /tmp/__perf_test.auxsample_simulate_real.XXXXX)
out=$tmp/out
data=$tmp/perf.data
lib=$(dirname "$0")/lib
auxsample_test_traps

if ! perf auxsample simulate --engine=valgrind -o "$data" -- true > "$out" 2>&1; then
	echo "Skip: no Valgrind engine: $(grep -o 'engine=valgrind: .*' "$out")"
	exit 2
fi

ran=0
export LC_ALL=C
# Python itself, not a wrapper script (pyenv's shims) that finds it.
py=/usr/bin/python3
[ -x "$py" ] || py=python3

# real NAME COMMAND...: simulate COMMAND, then hold it against the truth.
real() {
	local name=$1 rc

	shift
	if ! command -v "$1" > /dev/null; then
		echo "$name: skipped, no $1 (scripts/install-deps installs it)"
		return
	fi
	ran=$((ran + 1))
	perf auxsample simulate -o "$data" -- "$@" > "$tmp/stdout" 2> "$out"
	rc=$?
	if [ $rc -ne 0 ]; then
		killed $rc && fail "$name: simulate killed by signal $((rc - 128))"
		killed $rc || fail "$name: simulate failed (exit $rc)"
		return
	fi
	echo "$name: $(grep 'perf auxsample simulate:' "$out")"
	perf script -i "$data" --itrace=e > "$out" 2>&1
	if grep -q 'instruction trace error' "$out"; then
		fail "$name: perf's decoder found errors"
		return
	fi
	for depth in 64 1024; do
		python3 "$lib/auxsample_truth.py" --auxsample "$data" $depth perf > "$out" 2>&1 ||
			fail "$name: perf auxsample script's LBR at depth $depth is not the truth"
		echo "$name: perf auxsample script, depth $depth: $(tail -1 "$out")"
	done
	python3 "$lib/auxsample_truth.py" "$data" 64 perf > "$out" 2>&1 ||
		fail "$name: perf's virtual LBR is not the truth"
	echo "$name: perf: $(tail -1 "$out")"
}

# Inputs made here, the same on every machine.
awk 'BEGIN { x = 12345; for (i = 0; i < 10000; i++) {
	x = (x * 1103515245 + 12345) % 2147483648; printf "%d line %d\n", x, i } }' \
	> "$tmp/lines"
head -c 100000 "$tmp/lines" > "$tmp/100k"
[ "$(stat -c %s "$tmp/100k")" -eq 100000 ] || fail "no 100 KB input"

real "python3 json" "$py" -c 'import json; json.dumps(list(range(1000)))'
real "gzip of 100 KB" gzip -c "$tmp/100k"
gzip -c "$tmp/100k" | cmp -s - "$tmp/stdout" || fail "gzip: not what gzip writes natively"

real "ls -l /usr/bin" ls -l /usr/bin
real "sqlite3 :memory:" sqlite3 :memory: \
	'create table t(a, b); insert into t values (1, "x"), (2, "y"), (3, "x");
	 select b, sum(a) from t group by b order by b;'
if command -v sqlite3 > /dev/null; then
	grep -q '^x|4$' "$tmp/stdout" || fail "sqlite3: not the query's result"
fi
real "sort of 10k lines" sort "$tmp/lines"
sort "$tmp/lines" | cmp -s - "$tmp/stdout" || fail "sort: not what sort writes natively"

if [ "$ran" -eq 0 ]; then
	echo "Skip: none of the programs is installed"
	exit 2
fi
exit $err
