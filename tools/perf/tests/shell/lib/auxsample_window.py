# SPDX-License-Identifier: GPL-2.0
"""Windows of samples beside a full trace against perf's own decoder.

usage: auxsample_window.py <perf.data> <depth> <perf>

Checks, sample by sample, that the branches perf's own Intel PT decoder
attaches to the recorded samples of a full-trace recording ('perf script
--itrace=L<depth>', trace begins and ends left out as auxsample_truth.py
does) are the newest of those 'perf auxsample script --depth <depth>'
gives, entry for entry: perf may give fewer, never another.  Prints how
many samples are equal in full.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import auxsample_truth  # noqa: E402


def main():
    data, depth, perf = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    theirs = auxsample_truth.read_perf(perf, data, depth, [])
    ours = auxsample_truth.read_auxsample(perf, data, depth, [])
    if len(theirs) != len(ours) or not ours:
        print('%d samples from perf, %d from perf auxsample' % (len(theirs), len(ours)))
        return 1
    full = compared = 0
    for i, (t, o) in enumerate(zip(theirs, ours)):
        if t['ip'] != o['ip']:
            print('sample %d: ip %#x, perf auxsample says %#x' % (i, t['ip'], o['ip']))
            return 1
        if o['br'][:len(t['br'])] != t['br']:
            j = next(j for j, e in enumerate(t['br'])
                     if j >= len(o['br']) or o['br'][j] != e)
            print('sample %d ip %#x: perf entry %d is %#x -> %#x, perf auxsample %s' %
                  (i, t['ip'], j, t['br'][j][0], t['br'][j][1],
                   '%#x -> %#x' % o['br'][j] if j < len(o['br']) else 'has no more'))
            return 1
        compared += len(t['br'])
        full += t['br'] == o['br']
    print('%d samples, %d of perf\'s branches equal, %d samples equal in full'
          % (len(ours), compared, full))
    return 0 if compared else 1


if __name__ == '__main__':
    sys.exit(main())
