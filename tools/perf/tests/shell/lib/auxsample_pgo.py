# SPDX-License-Identifier: GPL-2.0
"""Helpers of the BOLT and AutoFDO test (auxsample_pgo.sh).

usage: auxsample_pgo.py truth-pa <perf.data> <binary> <depth>
         BOLT's pre-aggregated profile (perf2bolt --pa) of the simulator's
         true branches: each sample's <depth> newest, summed up as
         perf2bolt sums up LBR samples.  The binary must be static (its
         addresses are the ones the program ran at).
       auxsample_pgo.py agree <fdata> <fdata>
         How much two perf2bolt profiles agree, weighted by counts: the
         sum over every branch and fall-through of the smaller count, in
         percent of the larger total.
       auxsample_pgo.py hot <profile.txt> <function>...
         Check that the named functions are the hottest of an LLVM sample
         profile (llvm-profdata show --sample output), by total samples.
       auxsample_pgo.py autofdo <autofdo.txt> <binary> <unsymbolized.txt>
         Check perf auxsample inject --autofdo's ranges and branches of
         <binary> against llvm-profgen's --skip-symbolization output of
         the same samples (offsets from the first executable segment):
         the same count wherever both have one, and both cover 99% or
         more of the other's counts.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from auxsample_truth import read_truth  # noqa: E402


def functions(binary):
    """The binary's functions as sorted (start, end) pairs, from nm."""
    out = subprocess.run(['nm', '-S', '--defined-only', binary], check=True,
                         capture_output=True, text=True).stdout
    funcs = []
    for line in out.splitlines():
        w = line.split()
        if len(w) == 4 and w[2] in 'tTwWi':
            start, size = int(w[0], 16), int(w[1], 16)
            if size:
                funcs.append((start, start + size))
    return sorted(funcs)


def function_of(funcs, addr):
    lo, hi = 0, len(funcs)
    while lo < hi:
        mid = (lo + hi) // 2
        if funcs[mid][1] <= addr:
            lo = mid + 1
        else:
            hi = mid
    if lo < len(funcs) and funcs[lo][0] <= addr < funcs[lo][1]:
        return funcs[lo]
    return None


def truth_pa(data, binary, depth):
    """perf2bolt's DataAggregator on the true branches, newest first."""
    funcs = functions(binary)
    branches, runs = {}, {}
    for sample in read_truth(data + '.truth'):
        lbr = sample['br'][:depth]
        for i, (frm, to) in enumerate(lbr):
            branches[(frm, to)] = branches.get((frm, to), 0) + 1
            if i + 1 == len(lbr):
                continue
            older_from, older_to = lbr[i + 1]
            # A run is internal when the older branch came from its function.
            internal = function_of(funcs, older_to) is not None and \
                function_of(funcs, older_to) == function_of(funcs, older_from)
            key = (older_to, frm, 'F' if internal else 'f')
            runs[key] = runs.get(key, 0) + 1
    for (frm, to), n in sorted(branches.items()):
        print('B %x %x %d 0' % (frm, to, n))
    for (a, b, kind), n in sorted(runs.items()):
        print('%s %x %x %d' % (kind, a, b, n))


def read_fdata(path):
    counts = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) < 8:
                continue
            key = tuple(w[:6])
            counts[key] = counts.get(key, 0) + int(w[-1])
    return counts


def agree(path1, path2):
    a, b = read_fdata(path1), read_fdata(path2)
    both = sum(min(n, b.get(k, 0)) for k, n in a.items())
    total = max(sum(a.values()), sum(b.values()))
    assert total, 'empty profiles'
    print('%.2f' % (100.0 * both / total))


def hot(path, names):
    """The functions named are the hottest ones of llvm-profdata show."""
    totals = []
    with open(path) as f:
        for line in f:
            # 'Function: main: 1234, 56, 7 sampled lines'
            if line.startswith('Function: '):
                w = line.split()
                totals.append((int(w[2].rstrip(',')), w[1].rstrip(':')))
    top = [name for _, name in sorted(totals, reverse=True)]
    assert set(names) == set(top[:len(names)]), \
        'hottest functions %s, not %s' % (top[:len(names)], sorted(names))
    print('hottest functions: %s (of %d)' % (', '.join(top[:len(names)]), len(top)))


def first_exec_segment(binary):
    out = subprocess.run(['readelf', '-lW', binary], check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        w = line.split()
        if w and w[0] == 'LOAD' and 'E' in w[6:-1]:
            return int(w[2], 16)
    raise AssertionError('%s has no executable segment' % binary)


def read_counts(path, base, name=None):
    """The count sections of an AutoFDO-like text: [{(a, b): count}]."""
    sections, cur, binary = [], None, None
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines:
        line = line.strip()
        if line.startswith('// ') and not line.startswith('// build_id'):
            binary = line[3:]
        if not line or line.startswith('//'):
            if name and binary and sections:
                if binary == name:
                    return sections
                sections, binary = [], None
            continue
        if line.isdigit():
            cur = {}
            sections.append(cur)
            continue
        key, count = line.rsplit(':', 1)
        a, b = key.split('->' if '->' in key else '-')
        a, b = int(a, 16), int(b, 16)
        cur[(a - base if a else 0, b - base if b else 0)] = int(count)
    if name:
        raise AssertionError('no profile of %s in %s' % (name, path))
    return sections


def autofdo(ours_path, binary, ref_path):
    base = first_exec_segment(binary)
    ours = read_counts(ours_path, base, binary)
    ref = read_counts(ref_path, 0)
    # simpleperf's: ranges, addresses, branches; llvm-profgen's: ranges, branches.
    for what, o, r in (('ranges', ours[0], ref[0]), ('branches', ours[2], ref[1])):
        both = [k for k in o if k in r]
        for k in both:
            assert o[k] == r[k], '%s %x-%x: %d, llvm-profgen %d' % (what, k[0], k[1], o[k], r[k])
        common = sum(o[k] for k in both)
        cover_o = 100.0 * common / sum(o.values())
        cover_r = 100.0 * common / sum(r.values())
        assert cover_o >= 99 and cover_r >= 99, \
            '%s: %.2f%% of ours, %.2f%% of llvm-profgen\'s in common' % (what, cover_o, cover_r)
        print('%s: %d of ours, %d of llvm-profgen\'s, the same counts; %.2f%%/%.2f%% of the counts in common'
              % (what, len(o), len(r), cover_o, cover_r))


def main():
    cmd = sys.argv[1]
    if cmd == 'truth-pa':
        truth_pa(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == 'agree':
        agree(sys.argv[2], sys.argv[3])
    elif cmd == 'hot':
        hot(sys.argv[2], sys.argv[3:])
    elif cmd == 'autofdo':
        autofdo(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
