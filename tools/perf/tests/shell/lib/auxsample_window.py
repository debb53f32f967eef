# SPDX-License-Identifier: GPL-2.0
"""Windows of samples beside a full trace against perf's own decoder.

usage: auxsample_window.py <perf.data> <depth> <perf>

Checks, sample by sample, that the branches perf's own Intel PT decoder
attaches to the recorded samples of a full-trace recording ('perf script
--itrace=L<depth>', trace begins and ends left out as auxsample_truth.py
does) are those 'perf auxsample script --depth <depth>' gives, entry for
entry, up to the known skew of perf's placement: perf places a sample of
a full trace by its time, estimated from the timing packets, and may put
it a few branches before or after where the PMI stopped the trace (ours
is that stop, and equals the ground truth).  So perf's list must be ours
shifted by at most MAX_SKEW entries, equal wherever the two overlap:
another flow, or a wrong branch, fails.  Prints how many samples are
equal in full and how many are skewed.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import auxsample_truth  # noqa: E402


MAX_SKEW = 8


def skew(theirs, ours):
    """The k in -MAX_SKEW..MAX_SKEW, 0 first, for which theirs[i] is
    ours[i + k] wherever both exist (and they overlap), else None."""
    for k in sorted(range(-MAX_SKEW, MAX_SKEW + 1), key=abs):
        pairs = [(t, ours[i + k]) for i, t in enumerate(theirs) if 0 <= i + k < len(ours)]
        if pairs and all(t == o for t, o in pairs):
            return k
        if not theirs and k == 0:
            return 0
    return None


def main():
    data, depth, perf = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    theirs = auxsample_truth.read_perf(perf, data, depth, [])
    ours = auxsample_truth.read_auxsample(perf, data, depth, [])
    if len(theirs) != len(ours) or not ours:
        print('%d samples from perf, %d from perf auxsample' % (len(theirs), len(ours)))
        return 1
    full = compared = skewed = 0
    for i, (t, o) in enumerate(zip(theirs, ours)):
        if t['ip'] != o['ip']:
            print('sample %d: ip %#x, perf auxsample says %#x' % (i, t['ip'], o['ip']))
            return 1
        k = skew(t['br'], o['br'])
        if k is None:
            j = next((j for j, e in enumerate(t['br'])
                      if j >= len(o['br']) or o['br'][j] != e), 0)
            print('sample %d ip %#x: perf entry %d is %#x -> %#x, perf auxsample %s, '
                  'and no skew of up to %d entries aligns them' %
                  (i, t['ip'], j, t['br'][j][0], t['br'][j][1],
                   '%#x -> %#x' % o['br'][j] if j < len(o['br']) else 'has no more',
                   MAX_SKEW))
            return 1
        compared += len(t['br'])
        full += k == 0 and t['br'] == o['br']
        skewed += k != 0
    print('%d samples, %d of perf\'s branches compared, %d samples equal in full, '
          '%d placed up to %d branches off' % (len(ours), compared, full, skewed, MAX_SKEW))
    return 0 if compared else 1


if __name__ == '__main__':
    sys.exit(main())
