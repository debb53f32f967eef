#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# For the tests on 'perf auxsample simulate' recordings: where the
# simulator cannot run they are skipped (exit 2) saying why, and they
# trace a small static program built from auxsample_workload.c.  What all
# our tests share (auxsample_test.sh) comes with it.
# shellcheck disable=SC2154 # out is the sourcing test's

# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh

# auxsample_sim_check: skip unless the simulator can run here.
auxsample_sim_check() {
	local tool

	if [ "$(uname -m)" != x86_64 ]; then
		echo "Skip: perf auxsample simulate single-steps x86-64 code"
		exit 2
	fi
	if ! perf check feature -q auxsample || ! perf check feature -q libipt; then
		echo "Skip: perf built without Intel PT decoding (needs libipt)"
		exit 2
	fi
	for tool in cc python3; do
		if ! command -v $tool > /dev/null; then
			echo "Skip: no $tool"
			exit 2
		fi
	done
}

# auxsample_sim_workload PROGRAM LOG: build the static test program as
# PROGRAM (its name is its comm), or skip.
auxsample_sim_workload() {
	local src

	src=$(dirname "$0")/lib/auxsample_workload.c
	if ! cc -O1 -static -o "$1" "$src" -lpthread > "$2" 2>&1; then
		echo "Skip: cannot build a static test program (no static libc?)"
		cat "$2"
		exit 2
	fi
}

# auxsample_sim_samples TRUTH: how many samples a ground truth file holds
# (its reader, auxsample_truth.py, fails on one that is not whole).
auxsample_sim_samples() {
	python3 "$(dirname "$0")"/lib/auxsample_truth.py --samples "$1"
}

# auxsample_sim_decodes WHAT DATA: perf's own decoder reads DATA without
# an instruction trace error; else the test fails, saying WHAT (return 1).
auxsample_sim_decodes() {
	perf script -i "$2" --itrace=e > "$out" 2>&1
	if grep -q 'instruction trace error' "$out"; then
		fail "$1: perf's decoder found errors"
		return 1
	fi
}
