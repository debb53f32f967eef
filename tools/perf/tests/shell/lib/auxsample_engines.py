#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Whether two full-trace recordings of one program, made by two engines of
perf auxsample simulate, took the same branches in the program's own code.

usage: auxsample_engines.py NM_OUTPUT BRANCHES_A BRANCHES_B

NM_OUTPUT is 'nm -S' of the static program for the functions of its own
source; BRANCHES_* are 'perf script --itrace=b -F tid,ip,addr' of each
recording (upstream's decoder).  The branches from those functions are
compared; libc's are left out: which of its string functions an IFUNC
picks depends on the CPU's features, and Valgrind's simulated CPU is
not this one's.  Threads are compared in the order they first branch
from the program's code, each with its own sequence.  Exit status 0 when
equal, 1 with the first difference otherwise.
"""
import sys


def ranges(path):
    """[start, end) of each function 'nm -S' lists."""
    out = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 4 and parts[2] in 'tT':
                start = int(parts[0], 16)
                out.append((start, start + int(parts[1], 16)))
    return out


def threads(path, funcs):
    """Each thread's branches from the program's own functions."""
    seqs, order = {}, []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 4 or parts[2] != '=>':
                continue
            tid, src, dst = parts[0], int(parts[1], 16), int(parts[3], 16)
            # A trace end or begin (a syscall, the PMI of a sample) is none.
            if not src or not dst or not any(s <= src < e for s, e in funcs):
                continue
            if tid not in seqs:
                seqs[tid] = []
                order.append(tid)
            seqs[tid].append((src, dst))
    return [seqs[t] for t in order]


def main():
    funcs = ranges(sys.argv[1])
    a, b = threads(sys.argv[2], funcs), threads(sys.argv[3], funcs)
    if not a or not a[0]:
        print('no branch from the program in', sys.argv[2])
        return 1
    if len(a) != len(b):
        print(f'{len(a)} threads against {len(b)}')
        return 1
    for n, (x, y) in enumerate(zip(a, b)):
        for i, (p, q) in enumerate(zip(x, y)):
            if p != q:
                print(f'thread {n}, branch {i}: {p[0]:#x} -> {p[1]:#x} against {q[0]:#x} -> {q[1]:#x}')
                return 1
        if len(x) != len(y):
            print(f'thread {n}: {len(x)} branches against {len(y)}')
            return 1
    print(f'{len(a)} threads, {sum(len(x) for x in a)} branches, the same')
    return 0


if __name__ == '__main__':
    sys.exit(main())
