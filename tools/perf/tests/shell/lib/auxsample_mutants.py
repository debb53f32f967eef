#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Mutants of perf.data files through perf's commands (auxsample_mutants.sh).

  auxsample_mutants.py mutate SRC KIND SEED OUT
      write mutant KIND/SEED of SRC to OUT (deterministic)
  auxsample_mutants.py run [--seeds N] [--timeout S] [--keep DIR] SRC...
      every mutant of every SRC (and SRC itself) through every command;
      a death by a signal or a timeout fails, and is printed with the
      commands that reproduce it.  Exit 1 if any failed.

Kinds: aux-flip (bits of AUX data: AUX samples' and AUXTRACE records'),
aux-size (the size of an AUXTRACE record or of a sample's AUX data, huge,
zero or off by one), header (file header fields: data section, attrs,
unknown feature bits, feature section sizes), record (a record's size or
type), trunc (the file cut short), auxinfo (AUXTRACE_INFO's words: the
trace configuration), bytes (bytes anywhere after the file header).

Exit statuses are not enough to tell a signal: perf exits with 234 for
-EINVAL.  The commands run as subprocesses, whose status says which.
"""

import os
import random
import signal
import struct
import subprocess
import sys
import tempfile
import time

KINDS = ['aux-flip', 'aux-size', 'header', 'record', 'trunc', 'auxinfo', 'bytes']
HDR_SIZE = 104          # struct perf_file_header
SAMPLE, AUXTRACE_INFO, AUXTRACE = 9, 70, 71
HUGE = [0xffffffff, 1 << 62, 0xffffffffffffffff, 1 << 40, 0x7fffffff]


class PerfData:
    """Where things are in a perf.data file (file mode, native endian)."""

    def __init__(self, buf):
        self.buf = buf
        self.records = []       # (offset, type, size)
        self.aux = []           # (offset, length) of AUX data
        self.aux_sizes = []     # offsets of u64 AUX sizes
        self.auxinfo = []       # (offset, length) of AUXTRACE_INFO priv
        if len(buf) < HDR_SIZE or buf[:8] != b'PERFILE2':
            return
        off, size = struct.unpack_from('<QQ', buf, 40)
        end = min(off + size, len(buf))
        while off + 8 <= end:
            rtype, _, rsize = struct.unpack_from('<IHH', buf, off)
            if rsize < 8:
                break
            self.records.append((off, rtype, rsize))
            if rtype == AUXTRACE and rsize >= 48:
                dsize = struct.unpack_from('<Q', buf, off + 8)[0]
                self.aux_sizes.append(off + 8)
                self.aux.append((off + rsize, min(dsize, end - off - rsize)))
                off += dsize
            elif rtype == AUXTRACE_INFO and rsize > 16:
                self.auxinfo.append((off + 16, rsize - 16))
            elif rtype == SAMPLE:
                self.sample_aux(off, rsize)
            off += rsize

    def sample_aux(self, off, rsize):
        # PERF_SAMPLE_AUX comes last: a u64 size, the data, padding to 8.
        for p in range(off + 8, off + rsize - 8, 8):
            n = struct.unpack_from('<Q', self.buf, p)[0]
            if 0 < n and p + 8 + ((n + 7) & ~7) == off + rsize:
                self.aux_sizes.append(p)
                self.aux.append((p + 8, n))
                return


def mutate(buf, kind, seed):
    rnd = random.Random('%s:%d' % (kind, seed))
    b = bytearray(buf)
    pd = PerfData(bytes(buf))

    def put64(off, v):
        if off + 8 <= len(b):
            struct.pack_into('<Q', b, off, v & 0xffffffffffffffff)

    if kind == 'aux-flip':
        ranges = [r for r in pd.aux if r[1] > 0] or [(HDR_SIZE, len(b) - HDR_SIZE)]
        for _ in range(rnd.choice([1, 2, 8, 32])):
            start, n = rnd.choice(ranges)
            pos = start + rnd.randrange(n)
            if pos < len(b):
                b[pos] ^= 1 << rnd.randrange(8)
    elif kind == 'aux-size':
        if pd.aux_sizes:
            p = rnd.choice(pd.aux_sizes)
            old = struct.unpack_from('<Q', b, p)[0]
            put64(p, rnd.choice(HUGE + [0, old + 1, old - 1, old * 16]))
        else:
            return mutate(buf, 'record', seed)
    elif kind == 'header':
        field = rnd.choice(['data.offset', 'data.size', 'attr_size', 'attrs.size',
                            'attrs.offset', 'feature-bit', 'feature-section'])
        if field == 'data.offset':
            put64(40, rnd.choice(HUGE + [0, 8, len(b) - 4]))
        elif field == 'data.size':
            put64(48, rnd.choice(HUGE + [0, 1, len(b)]))
        elif field == 'attr_size':
            put64(16, rnd.choice(HUGE + [0, 1, 8, 4096]))
        elif field == 'attrs.size':
            put64(32, rnd.choice(HUGE + [0, 1, 7]))
        elif field == 'attrs.offset':
            put64(24, rnd.choice(HUGE + [len(b), len(b) - 8]))
        elif field == 'feature-bit':
            bit = rnd.randrange(32, 256)
            b[72 + bit // 8] |= 1 << (bit % 8)
        else:
            # the feature sections' table follows the data section
            doff, dsize = struct.unpack_from('<QQ', buf, 40)
            nfeat = sum(bin(x).count('1') for x in buf[72:104])
            if nfeat and doff + dsize + 16 * nfeat <= len(b):
                p = doff + dsize + 16 * rnd.randrange(nfeat) + 8 * rnd.randrange(2)
                put64(p, rnd.choice(HUGE + [0, 1, len(b)]))
    elif kind == 'record':
        if not pd.records:
            return mutate(buf, 'bytes', seed)
        off, rtype, rsize = rnd.choice(pd.records)
        if rnd.randrange(2):
            struct.pack_into('<H', b, off + 6, rnd.choice([0, 4, 8, 0xffff, rsize + 8]))
        else:
            struct.pack_into('<I', b, off, rnd.randrange(0, 100))
    elif kind == 'trunc':
        b = b[:rnd.randrange(HDR_SIZE, max(len(b), HDR_SIZE + 1))]
    elif kind == 'auxinfo':
        if not pd.auxinfo:
            return mutate(buf, 'aux-size', seed)
        start, n = rnd.choice(pd.auxinfo)
        for _ in range(rnd.choice([1, 2, 4])):
            p = start + 8 * rnd.randrange(max(n // 8, 1))
            put64(p, rnd.choice(HUGE + [0, 1, rnd.getrandbits(64)]))
    elif kind == 'bytes':
        for _ in range(16):
            b[rnd.randrange(HDR_SIZE, len(b))] = rnd.randrange(256)
    else:
        raise ValueError('no mutation kind ' + kind)
    return bytes(b)


def commands(path, tmp):
    inject = os.path.join(tmp, 'inject.data')
    return [['perf', 'auxsample', 'script', '-i', path],
            ['perf', 'auxsample', 'stat', '-i', path],
            ['perf', 'auxsample', 'report', '-i', path],
            ['perf', 'auxsample', 'inject', '-i', path, '-o', inject],
            ['perf', 'report', '--stdio', '-i', path],
            ['perf', 'script', '-i', path]]


def run(cmd, timeout):
    """None if it ended by itself, else why it failed."""
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 'did not end in %ds' % timeout
    if p.returncode < 0:
        try:
            name = signal.Signals(-p.returncode).name
        except ValueError:
            name = 'signal %d' % -p.returncode
        return 'killed by ' + name
    err = p.stderr.decode(errors='replace')
    for marker in ('ERROR: AddressSanitizer', 'ERROR: LeakSanitizer', 'runtime error:'):
        if marker in err:
            return 'sanitizer report: ' + next(l for l in err.splitlines() if marker in l)
    return None


def main():
    args = sys.argv[1:]
    if len(args) == 5 and args[0] == 'mutate':
        src, kind, seed, out = args[1], args[2], int(args[3]), args[4]
        with open(out, 'wb') as f:
            f.write(mutate(open(src, 'rb').read(), kind, seed))
        return 0
    if not args or args[0] != 'run':
        print(__doc__)
        return 2
    seeds, timeout, keep, srcs = 2, 10, None, []
    it = iter(args[1:])
    for a in it:
        if a == '--seeds':
            seeds = int(next(it))
        elif a == '--timeout':
            timeout = int(next(it))
        elif a == '--keep':
            keep = next(it)
        else:
            srcs.append(a)
    me = os.path.abspath(__file__)
    failed = runs = 0
    start = time.time()
    with tempfile.TemporaryDirectory(prefix='perf-mutants.') as tmp:
        for src in srcs:
            buf = open(src, 'rb').read()
            mutants = [(None, 0)] + [(k, s) for k in KINDS for s in range(seeds)]
            for kind, seed in mutants:
                name = 'orig' if kind is None else '%s.%d' % (kind, seed)
                path = os.path.join(tmp, '%s.%s' % (os.path.basename(src), name))
                with open(path, 'wb') as f:
                    f.write(buf if kind is None else mutate(buf, kind, seed))
                for cmd in commands(path, tmp):
                    runs += 1
                    why = run(cmd, timeout)
                    if not why:
                        continue
                    failed += 1
                    shown = ' '.join(cmd).replace(path, '/tmp/mutant.data')
                    print('FAIL: %s: %s' % (shown, why))
                    if kind is None:
                        print('  on the file as it is: %s' % ' '.join(cmd))
                    else:
                        print('  reproduce: python3 %s mutate %s %s %d /tmp/mutant.data && %s' %
                              (me, src, kind, seed, shown))
                    if keep:
                        os.makedirs(keep, exist_ok=True)
                        os.link(path, os.path.join(keep, os.path.basename(path))) \
                            if not os.path.exists(os.path.join(keep, os.path.basename(path))) \
                            else None
    print('%d runs of %d files, %d failed, %.0fs' %
          (runs, len(srcs) * (1 + len(KINDS) * seeds), failed, time.time() - start))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
