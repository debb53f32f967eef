#!/bin/bash
# perf auxsample: perf script -s Python scripts read the virtual LBR
# SPDX-License-Identifier: GPL-2.0
#
# Python scripts (perf script -s, built in as distributions build perf)
# see an injected file's virtual LBR as LBR: the brstack of every sample,
# branch by branch what perf script -F ip,brstack shows, and brstacksym
# its functions.

set -u

# shellcheck source=lib/auxsample_sim.sh
. "$(dirname "$0")"/lib/auxsample_sim.sh
auxsample_sim_check
if ! perf check feature -q libpython; then
	echo "Skip: perf built without libpython (python3-dev): no perf script -s"
	exit 2
fi

# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
err=0
tmp=$(mktemp -d /tmp/__perf_test.auxsample_python.XXXXX)
out=$tmp/out
auxsample_test_traps

auxsample_sim_workload "$tmp/workload" "$out"
perf auxsample simulate -o "$tmp/perf.data" --no-tsc -c 700 -- "$tmp/workload" branches 40 \
	> "$out" 2>&1 || fail "simulate failed"
perf auxsample inject -i "$tmp/perf.data" -o "$tmp/injected.data" > "$out" 2>&1 ||
	fail "inject failed"
samples=$(auxsample_sim_samples "$tmp/perf.data.truth")

script=$(dirname "$0")/lib/auxsample_brstack.py
perf script -i "$tmp/injected.data" -s "$script" > "$tmp/python" 2> "$out"
rc=$?
[ $rc -eq 0 ] || fail "perf script -s exits $rc"
grep -v '^newest ' "$tmp/python" > "$tmp/python.brstack"

# perf script's own view, entries cut to from/to.
perf script -i "$tmp/injected.data" -F ip,brstack 2> /dev/null | brstack_from_to \
	> "$tmp/perf.brstack"
if ! cmp -s "$tmp/python.brstack" "$tmp/perf.brstack"; then
	fail "the script's branch stacks are not perf script's"
	diff "$tmp/perf.brstack" "$tmp/python.brstack" | head -6
fi
[ "$(wc -l < "$tmp/python.brstack")" = "$samples" ] || fail "not $samples samples in the script"
awk 'NF < 2 { bad = 1 } END { exit bad }' "$tmp/python.brstack" || fail "a sample without branches"
grep -q '^newest .*fib+0x[0-9a-f]* -> .*fib' "$tmp/python" || fail "brstacksym: no branch in fib"
branches=$(awk '{ n += NF - 1 } END { print n }' "$tmp/python.brstack")
echo "perf script -s: $samples samples, $branches branches, the same as perf script -F ip,brstack"
exit $err
