#!/bin/bash
# perf auxsample: CoreSight ETM full trace against simpleperf's AutoFDO output
# SPDX-License-Identifier: GPL-2.0
#
# Real ETMv4 (formatted, ETR) and ETE (raw, TRBE) recordings of the same
# program, made by simpleperf on an Android phone, come with the AutoFDO
# text simpleperf inject writes for them (perf_inject.data).  perf
# auxsample script --autofdo must give the same ranges and branch counts,
# but for one systematic difference: simpleperf writes 0 as the target of
# every indirect branch (it takes targets from the opcode), where we give
# the target the trace names when it lies in the same binary.  In
# etm_test_loop that is the one RET at 0x1088, back to main at 0x10a4;
# the other indirect branches (RET at 0x10b0, BR at 0x10ec) leave the
# binary and are 0 in both.
#
# A file whose trace data is missing must fail with a clear error, and
# corrupted trace must decode without crashing, with its errors counted;
# perf built without libopencsd must refuse the trace, naming it.

set -u

data_dir=${AUXSAMPLE_DATA:-$(dirname "$0")/../../../../../../../shared/data}/etm/simpleperf

if ! perf check feature -q auxsample; then
	echo "Skip: perf built without libauxsample (needs libipt or libopencsd)"
	exit 2
fi
if [ ! -r "$data_dir/perf_etm.data" ]; then
	echo "Skip: no shared ETM data (AUXSAMPLE_DATA=<shared/data> with etm/simpleperf)"
	exit 2
fi
# Without libopencsd perf has no ETM decoder: the trace must be refused,
# naming what perf lacks, rather than decoded to nothing.
if ! perf check feature -q libopencsd; then
	stderr=$(mktemp /tmp/__perf_test.auxsample_etm.XXXXX)
	if perf auxsample script -i "$data_dir/perf_etm.data" > /dev/null 2> "$stderr"; then
		echo "FAIL: perf auxsample script succeeded on ETM trace without libopencsd"
		rm -f "$stderr"
		exit 1
	fi
	if ! grep -q "CoreSight ETM trace is not decoded: perf was built without libopencsd" \
			"$stderr"; then
		echo "FAIL: no error naming the missing libopencsd:"
		head -c 2000 "$stderr"
		rm -f "$stderr"
		exit 1
	fi
	rm -f "$stderr"
	echo "ETM trace refused, naming libopencsd"
	exit 0
fi
if ! command -v python3 > /dev/null; then
	echo "Skip: no python3"
	exit 2
fi

# shellcheck source=lib/auxsample_test.sh
. "$(dirname "$0")"/lib/auxsample_test.sh
err=0
tmp=$(mktemp -d /tmp/__perf_test.auxsample_etm.XXXXX)
out=$tmp/out
auxsample_test_traps

# The recordings' mmap records name /data/local/tmp/etm_test_loop.
symfs=$tmp/symfs
mkdir -p "$symfs/data/local/tmp"
ln -s "$(cd "$data_dir" && pwd)/etm_test_loop" "$symfs/data/local/tmp/etm_test_loop"

# What we expect: simpleperf's text with the RET's real target.
expected=$tmp/expected
sed 's/^1088->0:1$/1088->10a4:1/' "$data_dir/perf_inject.data" > "$expected"
if cmp -s "$expected" "$data_dir/perf_inject.data"; then
	echo "FAIL: perf_inject.data has no 1088->0 branch: has it changed?"
	exit 1
fi
# Taken branches in it, all told: 207.
nr_branches=$(awk '/->/ { split($0, f, ":"); n += f[2] } END { print n }' "$expected")

# same_autofdo FILE: our AutoFDO text of FILE is the expected one.
same_autofdo() {
	local file=$1

	if ! perf auxsample script --autofdo --symfs "$symfs" -i "$data_dir/$file" \
			> "$out" 2> "$tmp/stderr"; then
		cat "$tmp/stderr" >> "$out"
		fail "perf auxsample script --autofdo -i $file failed"
		return
	fi
	if ! diff -u "$expected" "$out" > "$tmp/diff"; then
		cp "$tmp/diff" "$out"
		fail "$file: AutoFDO ranges and branch counts differ from simpleperf's"
		return
	fi
	echo "$file: AutoFDO text as simpleperf's, $nr_branches taken branches"
}

# same_stat FILE: stat counts the same branches, without errors.
same_stat() {
	local file=$1

	perf auxsample stat --symfs "$symfs" -i "$data_dir/$file" > "$out" 2>&1
	if ! grep -Eq "^ +$nr_branches  taken branches" "$out" ||
	   ! grep -Eq "^ +0  decode errors" "$out"; then
		fail "$file: perf auxsample stat does not count $nr_branches branches and 0 errors"
	fi
}

for file in perf_etm.data perf_with_unformatted_trace.data; do
	same_autofdo $file
	same_stat $file
done

# packet_targets DUMP: from perf report -D's packet dump, the address in
# the first address packet after each atom packet, when nothing but
# timestamps, cycle counts, contexts, commits, events and exception
# returns comes between: the target of the indirect branch whose E the
# atom packet holds.  An address after anything else (a TRACE_ON: where
# the trace resumed) is no branch's target.
packet_targets() {
	awk '
	{
		id = $0; sub(/.*ID:/, "", id); sub(/;.*/, "", id)
		pkt = $0; sub(/.*\tI_/, "I_", pkt); sub(/ .*/, "", pkt)
	}
	pkt ~ /^I_ATOM_F/ { open[id] = 1; next }
	pkt ~ /^I_ADDR_/ {
		if (open[id] && match($0, /Addr=0x[0-9A-Fa-f]+/)) {
			a = tolower(substr($0, RSTART + 7, RLENGTH - 7))
			sub(/^0+/, "", a)
			print a
		}
		open[id] = 0
		next
	}
	pkt ~ /^I_(TIMESTAMP|CCNT_F.|CTXT|COMMIT|EVENT|IGNORE|EXCEPT_RTN)$/ { next }
	pkt ~ /^I_/ { open[id] = 0 }
	' "$1" | sort -u
}

# indirect_targets: the targets of the indirect branches perf auxsample
# script lists, '?' where it does not know one.
indirect_targets() {
	awk '$NF ~ /^(ind_jump|ind_call|ret|far)$/ {
		for (i = 1; i < NF; i++)
			if ($i == "->")
				print $(i + 1)
	}' | sort -u
}

# An indirect branch's target is in the trace when the address packet
# after it is followed by trace going off (the address filter: TRACE_ON)
# or by the end of the trace, although OpenCSD names none.  Debian's perf
# 6.1 lists the packets of perf_etm.data; it lists none of the raw ETE in
# perf_with_unformatted_trace.data, whose targets must be known all the
# same.
reference=$data_dir/reference-linux-perf-6.1-libopencsd-1.3.3
for file in perf_etm.data perf_with_unformatted_trace.data; do
	perf auxsample script --symfs "$symfs" -i "$data_dir/$file" 2> "$out" |
		indirect_targets > "$tmp/targets"
	if grep -qx '?' "$tmp/targets"; then
		cp "$tmp/targets" "$out"
		fail "$file: an indirect branch's target is unknown"
		continue
	fi
	[ "$file" = perf_etm.data ] || continue
	packet_targets "$reference/perf_etm.report-D.txt" > "$tmp/expected_targets"
	if ! diff -u "$tmp/expected_targets" "$tmp/targets" > "$out"; then
		fail "$file: indirect branch targets are not the address packets after their atoms"
	else
		echo "$file: indirect branches go where the packets say:" \
		     "$(tr '\n' ' ' < "$tmp/targets")"
	fi
done

# --autofdo: exceptions are no branches there (they end no range in
# simpleperf's).  perf_kernel.data's branches that script lists are two
# exceptions (no kernel image: the rest is gaps): no AutoFDO branch.
file=perf_kernel.data
perf auxsample script -i "$data_dir/$file" > "$tmp/listing" 2> "$out"
taken=$(awk '$NF != "gap" && $NF != "intr"' "$tmp/listing" | wc -l)
intr=$(awk '$NF == "intr"' "$tmp/listing" | wc -l)
perf auxsample script --autofdo -i "$data_dir/$file" > "$tmp/afdo" 2> "$out"
afdo=$(awk '/->/ { split($0, f, ":"); n += f[2] } END { print n + 0 }' "$tmp/afdo")
if [ "$intr" -eq 0 ]; then
	fail "$file: no exception in the listing: has the file changed?"
elif [ "$afdo" -ne "$taken" ]; then
	cp "$tmp/afdo" "$out"
	fail "$file: $afdo AutoFDO branches, not the $taken taken branches" \
	     "without the $intr exceptions"
else
	echo "$file: $afdo AutoFDO branches, $intr exceptions left out"
fi

# The AUX records of this one announce 1.5 MB of trace; none is in it.
perf auxsample stat -i "$data_dir/perf_with_missing_aux_data.data" > "$out" 2>&1
rc=$?
if [ $rc -eq 0 ] || [ $rc -ge 128 ]; then
	fail "perf_with_missing_aux_data.data: exit status $rc, not a clean failure"
elif ! grep -q "holds no trace data" "$out"; then
	fail "perf_with_missing_aux_data.data: no error about the missing trace"
else
	echo "perf_with_missing_aux_data.data: fails with exit status $rc and says why"
fi

# corrupt IN OUT SEED: IN with bytes of its trace (the data of its
# PERF_RECORD_AUXTRACE events) changed.  Seed 0: 32 bytes at offset 270 of
# the first buffer XORed with 0xa5, which perf_etm.data's ETMv4 decoder
# cannot make sense of; others: random bit flips and bytes.
corrupt() {
	python3 - "$1" "$2" "$3" <<'EOF'
import random
import struct
import sys

PERF_RECORD_AUXTRACE = 71
src, dst, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = bytearray(open(src, 'rb').read())
# PERFILE2 header: magic, size, attr_size, attrs {offset, size}, data {offset, size}
off, size = struct.unpack_from('<QQ', d, 40)
end = off + size
bufs = []
while off + 8 <= end:
    typ, misc, esize = struct.unpack_from('<IHH', d, off)
    if esize == 0:
        break
    if typ == PERF_RECORD_AUXTRACE:
        tsize = struct.unpack_from('<Q', d, off + 8)[0]
        bufs.append((off + esize, tsize))
        off += tsize
    off += esize
if not bufs:
    sys.exit('no PERF_RECORD_AUXTRACE in ' + src)
r = random.Random(seed)
start, tsize = bufs[0]
if seed == 0:
    for i in range(270, min(302, tsize)):
        d[start + i] ^= 0xa5
else:
    for _ in range(r.randint(1, 32)):
        start, tsize = r.choice(bufs)
        if r.randrange(2):
            d[start + r.randrange(tsize)] ^= 1 << r.randrange(8)
        else:
            d[start + r.randrange(tsize)] = r.randrange(256)
open(dst, 'wb').write(d)
EOF
}

corrupted=$tmp/corrupted.data
if ! corrupt "$data_dir/perf_etm.data" "$corrupted" 0 > "$out" 2>&1; then
	fail "cannot make a corrupted copy of perf_etm.data"
else
	perf auxsample stat --symfs "$symfs" -i "$corrupted" > "$out" 2>&1
	rc=$?
	errors=$(sed -n 's/^ *\([0-9]*\)  decode errors$/\1/p' "$out")
	if [ $rc -ne 0 ]; then
		fail "corrupted perf_etm.data: exit status $rc"
	elif [ "${errors:-0}" -lt 1 ]; then
		fail "corrupted perf_etm.data: no decode error counted"
	else
		echo "corrupted perf_etm.data: decodes, $errors decode errors counted"
	fi
fi

# Random damage: never a crash, whatever it decodes into.
for file in perf_etm.data perf_with_unformatted_trace.data; do
	for seed in $(seq 1 20); do
		corrupt "$data_dir/$file" "$corrupted" "$seed" > "$out" 2>&1 || break
		perf auxsample script --symfs "$symfs" -i "$corrupted" > /dev/null 2> "$out"
		rc=$?
		if [ $rc -ge 128 ]; then
			fail "$file with random damage (seed $seed): killed by signal $((rc - 128))"
			break
		fi
	done
done

exit $err
