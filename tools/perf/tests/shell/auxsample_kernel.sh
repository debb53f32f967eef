#!/bin/bash
# perf auxsample simulate --kernel: kernel-traced samples end at the sample
# SPDX-License-Identifier: GPL-2.0
#
# perf record -Aintel_pt -e instructions without :u traces the kernel: each
# snippet goes on past the sample through the PMI's NMI path to perf's AUX
# copy.  The simulator's kernel (an image of its own, in the build-id
# cache of a private HOME) is in the trace around syscalls and PMIs; the
# virtual LBR of every sample must be the true branches before the sample
# point, for perf auxsample script (libauxsample's late-sample rule) and
# for perf's own decoder (--itrace=L, thread_stack__br_sample_late()).
# Without the image the kernel stretches are gaps, counted by stat.

set -u

# shellcheck source=lib/auxsample_sim.sh
. "$(dirname "$0")"/lib/auxsample_sim.sh
auxsample_sim_check
err=0
lib=$(dirname "$0")/lib
tmp=$(mktemp -d /tmp/__perf_test.auxsample_kernel.XXXXX)
data=$tmp/perf.data
out=$tmp/out
auxsample_test_traps

auxsample_sim_workload "$tmp/workload" "$out"
wl=$tmp/workload
# The build-id cache the simulator adds the image to, and perf reads.
export HOME=$tmp/home
mkdir -p "$HOME"

# check WHAT SIMULATE-OPTIONS -- COMMAND: three ways equal at depth 64.
check() {
	local what=$1

	shift
	if ! perf auxsample simulate --kernel -o "$data" "$@" > "$out" 2>&1; then
		fail "$what: simulate failed"
		return 1
	fi
	auxsample_sim_decodes "$what" "$data" || return 1
	if ! python3 "$lib/auxsample_truth.py" --exact "$data" 64 perf > "$out" 2>&1; then
		fail "$what: perf's virtual LBR does not end at the sample"
		return 1
	fi
	echo "$what: perf: $(head -1 "$out")"
	if ! python3 "$lib/auxsample_truth.py" --exact --auxsample "$data" 64 perf \
		> "$out" 2>&1; then
		fail "$what: perf auxsample script's virtual LBR does not end at the sample"
		return 1
	fi
	echo "$what: perf auxsample script: $(head -1 "$out")"
}

# The simulated kernel runs in the ptrace engine, which --kernel picks:
# the Valgrind engine is refused, with what to do.
perf auxsample simulate --kernel --engine=valgrind -o "$data" -- "$wl" branches 1 > "$out" 2>&1
status=$?
[ "$status" -eq 129 ] && grep -q 'need --engine=ptrace' "$out" ||
	fail "--kernel --engine=valgrind: exit $status, not refused (129) with a reason"

check "branches, calls, jump table, recursion" -c 700 -- "$wl" branches 40
check "signal handler" -c 700 -- "$wl" signal 20
check "two threads, two CPUs" -c 700 -- "$wl" threads 20
# Periods that end on syscalls: their PMI is taken at the syscall entry,
# a kernel sample IP, and its branches end at the syscall.
if check "periods ending on syscalls" -c 97 -- "$wl" syscalls 100; then
	python3 "$lib/auxsample_truth.py" --dump "$data.truth" > "$out" 2>&1
	grep -q '^sample .* ip 0xffffffff81' "$out" ||
		fail "periods ending on syscalls: no sample taken in the kernel"
fi

# The kernel's code is read as perf reads a vmlinux: symbols too.
perf script -i "$data" --itrace=b -F ip,sym > "$out" 2>&1
for sym in entry_SYSCALL_64 asm_exc_nmi perf_prepare_sample pt_event_snapshot_aux; do
	grep -q "$sym" "$out" || fail "perf's decoder shows no $sym"
done
perf auxsample script -i "$data" --depth 64 > "$out" 2>&1
grep -q 'do_syscall_64' "$out" || fail "perf auxsample script shows no kernel symbol"

# Without the image: the kernel stretches are gaps, counted; no kernel
# branch is made up.
HOME=$tmp/nowhere perf auxsample stat -i "$data" > "$out" 2>&1
gaps=$(awk '/trace gaps/ { print $1 }' "$out")
[ "${gaps:-0}" -gt 0 ] && grep -q 'no memory image' "$out" ||
	fail "without the image: no gaps counted"
HOME=$tmp/nowhere perf auxsample script -i "$data" --depth 64 > "$out" 2>&1
grep -q 'ffffffff8[0-9a-f]* .*-> *ffffffff8' "$out" &&
	fail "without the image: a branch within the kernel"

# The image named with --vmlinux, where the build-id cache has none.
HOME=$tmp/nowhere python3 "$lib/auxsample_truth.py" --exact --auxsample "$data" 64 perf \
	--vmlinux "$data.vmlinux" > "$out" 2>&1 ||
	fail "--vmlinux: perf auxsample script's virtual LBR does not end at the sample"
HOME=$tmp/nowhere perf auxsample stat -i "$data" --vmlinux "$data.vmlinux" > "$out" 2>&1
grep -q 'no memory image' "$out" && fail "--vmlinux: the kernel's code is still missing"

# Without the image, PSBs close together: each run of branches between
# gaps true and in order, the newest the truth's newest; with it, three
# ways equal.  (Small snippets: the truth holds 1024 branches a sample.)
if check "without the image, a PSB every 256 bytes" -c 700 --psb-period 256 \
	--aux-sample-size 1024 -- "$wl" branches 40; then
	HOME=$tmp/nowhere python3 "$lib/auxsample_truth.py" --gaps "$data" 64 perf > "$out" 2>&1 ||
		fail "without the image: not the true branches between the gaps"
	echo "without the image: $(tail -1 "$out")"
fi

# Cycles (CYC packets) of the branches that the late-sample rule keeps:
# timed while they wait, they are the instructions' between two branches
# (the simulator's clock gives each the same cycles), as user-only.
if check "cycle-accurate" -c 700 --cyc -- "$wl" branches 40; then
	perf auxsample inject -i "$data" -o "$tmp/cyc.data" > "$out" 2>&1 ||
		fail "cycles: inject failed"
	perf script -i "$tmp/cyc.data" -F ip,brstack > "$tmp/cyc.brstack" 2> /dev/null
	python3 "$lib/auxsample_cycles.py" "$wl" "$tmp/cyc.brstack" 6 > "$out" 2>&1 ||
		fail "cycles: not those of the instructions run"
	echo "cycles: $(cat "$out")"
fi

# perf record --kcore: the kernel's code from <output>/kcore_dir, which
# perf takes before any vmlinux; no build-id cache to help.
kd=$tmp/kcore.data
if HOME=$tmp/nowhere perf auxsample simulate --kcore -o "$kd" -c 700 -- "$wl" branches 20 \
	> "$out" 2>&1 && [ -f "$kd/kcore_dir/kcore" ] && [ -f "$kd/kcore_dir/kallsyms" ]; then
	HOME=$tmp/nowhere python3 "$lib/auxsample_truth.py" --exact --auxsample "$kd" 64 perf \
		> "$out" 2>&1 || fail "--kcore: perf auxsample script does not read kcore_dir"
	HOME=$tmp/nowhere python3 "$lib/auxsample_truth.py" --exact "$kd" 64 perf > "$out" 2>&1 ||
		fail "--kcore: perf's decoder does not read kcore_dir"
	HOME=$tmp/nowhere perf auxsample stat -i "$kd" > "$out" 2>&1
	grep -q 'no memory image' "$out" && fail "--kcore: the kernel's code is still missing"
	HOME=$tmp/nowhere perf auxsample script -i "$kd" --depth 64 > "$out" 2>&1
	grep -q 'perf_prepare_sample\|do_syscall_64\|asm_exc_nmi' "$out" ||
		fail "--kcore: no kernel symbol from kallsyms"
else
	fail "--kcore: simulate wrote no kcore_dir"
fi

# perf record -Aintel_pt -e 'sched:*' -a: sched_switch samples on two
# CPUs, each at the tracepoint's call site in the kernel, with its raw
# record; their virtual LBR is the kernel's path to the tracepoint.
if check "sched_switch tracepoint, two CPUs" --tracepoint -- "$wl" sleeps 10; then
	perf script -i "$data" --itrace=e -F cpu,event,ip,sym,trace > "$out" 2>&1
	cpus=$(awk '$2 == "sched:sched_switch:" { print $1 }' "$out" | sort -u | wc -l)
	[ "$cpus" -eq 2 ] || fail "tracepoint: samples on $cpus CPUs, not 2"
	sw='sched:sched_switch: prev_comm=workload prev_pid=[0-9]* .*==> next_comm=swapper/'
	grep -q "$sw.* __traceiter_sched_switch\$" "$out" ||
		fail "tracepoint: no sample at the call site with its record"
	perf report -i "$data" --stdio > "$out" 2>&1
	grep -q "of event 'sched:sched_switch'" "$out" &&
	grep -q '\[k\] __schedule  *\[k\] __traceiter_sched_switch' "$out" &&
	grep -q '\[k\] do_syscall_64  *\[k\] __schedule' "$out" ||
		fail "tracepoint: perf report shows no kernel branches to the tracepoint"
fi

exit $err
