# SPDX-License-Identifier: GPL-2.0
"""Windows placed by time alone must hold no branch from after the sample.

usage: auxsample_window_time.py <perf.data> <copy> <depth> <perf>

Writes <copy>, <perf.data> with the IP of every sample changed to 1, so
that no sample is at the place where its PMI stopped the trace and each
window ends at the last TSC packet before the sample; then checks, sample
by sample, that the branches 'perf auxsample script' gives for the copy
are a run of the ground truth's (newest first), anywhere in it: older
branches, never one that came after the sample.  Windows older than the
1024 branches the truth keeps cannot be checked and are counted.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import auxsample_truth  # noqa: E402

PERF_RECORD_SAMPLE = 9
PERF_RECORD_AUXTRACE = 71
TRUTH_BRANCHES = 1024   # SIM_TRUTH_BRANCHES: the truth keeps no more


def rewrite_ips(src, dst):
    buf = bytearray(open(src, 'rb').read())
    off, size = struct.unpack_from('<QQ', buf, 40)
    pos, end, nr = off, off + size, 0
    while pos < end:
        typ, _, hsize = struct.unpack_from('<IHH', buf, pos)
        if not hsize:
            break
        nxt = pos + hsize
        if typ == PERF_RECORD_SAMPLE:
            # sample_type IDENTIFIER|IP|...: the IP follows the identifier.
            struct.pack_into('<Q', buf, pos + 16, 1)
            nr += 1
        elif typ == PERF_RECORD_AUXTRACE:
            nxt += struct.unpack_from('<Q', buf, pos + 8)[0]
        pos = nxt
    open(dst, 'wb').write(buf)
    return nr


def main():
    data, copy, depth, perf = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    if not rewrite_ips(data, copy):
        print('no samples in', data)
        return 1
    truth = auxsample_truth.read_truth(data + '.truth')
    got = auxsample_truth.read_auxsample(perf, copy, depth, [])
    if len(truth) != len(got):
        print('%d samples in the truth, %d from perf auxsample' % (len(truth), len(got)))
        return 1
    checked = older = 0
    for i, (t, g) in enumerate(zip(truth, got)):
        br, n = t['br'], len(g['br'])
        if not n:
            continue
        if any(br[k:k + n] == g['br'] for k in range(len(br) - n + 1)):
            checked += 1
        elif len(br) < TRUTH_BRANCHES:
            print('sample %d: its window by time is no run of the true branches' % i)
            return 1
        else:
            older += 1
    print('%d samples: %d windows by time are runs of the true branches, %d too old to check'
          % (len(truth), checked, older))
    return 0 if checked else 1


if __name__ == '__main__':
    sys.exit(main())
