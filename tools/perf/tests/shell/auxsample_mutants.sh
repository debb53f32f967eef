#!/bin/bash
# perf auxsample: mutated perf.data files end in errors, never in signals or hangs
# SPDX-License-Identifier: GPL-2.0
#
# Mutants of a simulated Intel PT AUX-sample recording and of the real
# CoreSight ETM recordings in shared/data/etm/simpleperf (AUX bit flips,
# huge or wrong AUX sizes, file header fields, record sizes and types,
# truncations, the trace configuration in AUXTRACE_INFO), each file also
# as it is, through perf auxsample script, stat, report and inject, perf
# report --stdio and perf script, each with a time limit.  Any of them
# killed by a signal or not ending in time fails the test, printed with
# the commands that reproduce it; a clear error is fine.  The mutants
# are the same on every run (lib/auxsample_mutants.py, seeded).
#
# PERF_MUTANTS_SEEDS (2) mutants of each kind per file, PERF_MUTANTS_TIMEOUT
# (10) seconds per command, PERF_MUTANTS_KEEP=<dir> keeps the failing ones.

set -u

lib=$(cd "$(dirname "$0")"/lib && pwd)
data_dir=${AUXSAMPLE_DATA:-$(dirname "$0")/../../../../../../../shared/data}/etm/simpleperf

if ! perf check feature -q auxsample || ! perf check feature -q libopencsd; then
	echo "Skip: perf built without ETM decoding (needs libopencsd, CORESIGHT=1)"
	exit 2
fi
if ! command -v python3 > /dev/null; then
	echo "Skip: no python3"
	exit 2
fi

# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
tmp=$(mktemp -d /tmp/__perf_test.auxsample_mutants.XXXXX)
auxsample_test_traps

files=()
# A simulated recording where the simulator runs (x86-64, static libc).
if [ "$(uname -m)" = x86_64 ] &&
   cc -O1 -static -o "$tmp/wl" "$lib/auxsample_workload.c" -lpthread \
	> "$tmp/out" 2>&1 &&
   perf auxsample simulate -o "$tmp/sim.data" --no-tsc --aux-sample-size 1024 -c 700 -- \
	"$tmp/wl" branches 10 > "$tmp/out" 2>&1; then
	files+=("$tmp/sim.data")
else
	echo "no simulated recording (not x86-64, no static libc, or simulate failed):"
	head -5 "$tmp/out"
fi
for f in perf_etm.data perf_with_unformatted_trace.data; do
	[ -r "$data_dir/$f" ] && files+=("$data_dir/$f")
done
if [ ${#files[@]} -eq 0 ]; then
	echo "Skip: no simulated recording and no shared ETM data (AUXSAMPLE_DATA)"
	exit 2
fi

keep=()
[ -n "${PERF_MUTANTS_KEEP:-}" ] && keep=(--keep "$PERF_MUTANTS_KEEP")
# The simulated recording is made again on each run: keep it beside the
# failing mutants so that the reproducing commands work afterwards.
[ -n "${PERF_MUTANTS_KEEP:-}" ] && [ -r "$tmp/sim.data" ] &&
	mkdir -p "$PERF_MUTANTS_KEEP" && cp "$tmp/sim.data" "$PERF_MUTANTS_KEEP/"
cd "$tmp" || exit 1
python3 "$lib/auxsample_mutants.py" run --seeds "${PERF_MUTANTS_SEEDS:-2}" \
	--timeout "${PERF_MUTANTS_TIMEOUT:-10}" "${keep[@]}" "${files[@]}"
