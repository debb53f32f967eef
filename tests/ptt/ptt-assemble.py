#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Assemble libipt's .ptt test sources as libipt's pttc does
(doc/howto_pttc.md), without pttc, which Debian does not ship: yasm
assembles the code, this script resolves the @pt directives' labels with
yasm's map file and writes what ptt-compare encodes with libipt's own
packet encoder (pt_enc_next()).

usage: ptt-assemble.py SOURCE.ptt OUTDIR

Writes OUTDIR/NAME.bin (yasm's output), NAME.img (a line 'vstart offset
length' per section: where the binary's bytes are mapped) and NAME.pkt
(a packet a line: its name, then its fields as numbers).  Exits 2 with
the reason on stderr for a source it cannot take (a directive it does not
know, sideband), 1 on any other error.
"""
import os
import re
import subprocess
import sys
import tempfile

DIRECTIVE = re.compile(r'@pt\s+(?:[A-Za-z_][A-Za-z0-9_]*\s*:\s*)?([a-z0-9.\-]+)\s*\((.*)\)')
NO_ARGS = ('psb', 'psbend', 'pad', 'ovf', 'stop')
IP_PACKETS = ('tip', 'tip.pge', 'tip.pgd', 'fup')
# IP compression: the bytes of the IP that the packet carries.
IPC_BYTES = {0: 0, 1: 2, 2: 4, 3: 6, 4: 6, 6: 8}


class Unsupported(Exception):
    pass


def number(text, labels):
    text = text.strip()
    if text.startswith('%'):
        name = text[1:]
        if name not in labels:
            raise ValueError('no label %s' % name)
        return labels[name]
    return int(text, 0)


def assemble(src, out, name):
    """yasm's binary and map file: sections and labels."""
    with tempfile.TemporaryDirectory() as tmp:
        inc = os.path.join(tmp, 'map.inc')
        mapfile = os.path.join(tmp, 'map')
        with open(inc, 'w') as f:
            f.write('[map all]\n')
        subprocess.run(['yasm', '-f', 'bin', '-P', inc, '--mapfile=' + mapfile,
                        '-o', os.path.join(out, name + '.bin'), src], check=True)
        with open(mapfile) as f:
            text = f.read()
    origin = 0
    m = re.search(r'-- Program origin -+\n\n([0-9A-Fa-f]+)', text)
    if m:
        origin = int(m.group(1), 16)
    sections = []
    for block in re.split(r'\n---- Section ', text.split('-- Symbols')[0])[1:]:
        fields = dict(re.findall(r'^(\w+):\s+(\S+)', block, re.M))
        length = int(fields['length'], 16)
        if length:
            sections.append((int(fields['vstart'], 16), int(fields['start'], 16) - origin,
                             length))
    labels = {}
    if '-- Symbols' in text:
        for real, virt, label in re.findall(r'^([0-9A-Fa-f]+)\s+([0-9A-Fa-f]+)\s+(\S+)$',
                                            text.split('-- Symbols')[1], re.M):
            labels[label] = int(virt, 16)
    return sections, labels


def packet(directive, args, labels):
    """A .pkt line for one @pt directive."""
    args = args.strip()
    if directive in NO_ARGS:
        return directive
    if directive in ('tnt', 'tnt64'):
        bits = [c for c in args if c not in ' .']
        if not bits or any(c not in 'tn' for c in bits):
            raise ValueError('bad tnt payload %r' % args)
        # The first branch is the most significant bit.
        payload = 0
        for c in bits:
            payload = payload << 1 | (c == 't')
        return '%s %d %#x' % (directive, len(bits), payload)
    if directive in IP_PACKETS:
        ipc, addr = args.split(':', 1)
        ipc = int(ipc, 0)
        if ipc not in IPC_BYTES:
            raise ValueError('bad ip compression %d' % ipc)
        ip = number(addr, labels)
        if IPC_BYTES[ipc] < 8:
            ip &= (1 << (8 * IPC_BYTES[ipc])) - 1
        return '%s %d %#x' % (directive, ipc, ip)
    if directive == 'mode.exec':
        bits = {'16bit': 16, '32bit': 32, '64bit': 64}[args]
        return 'mode.exec %d' % bits
    if directive == 'mode.tsx':
        intx, abrt = {'begin': (1, 0), 'abort': (0, 1), 'commit': (0, 0)}[args]
        return 'mode.tsx %d %d' % (intx, abrt)
    if directive == 'pip':
        parts = [p.strip() for p in args.split(',')]
        return 'pip %#x %d' % (number(parts[0], labels), len(parts) > 1)
    if directive in ('tsc', 'cbr', 'mtc', 'cyc', 'vmcs', 'mnt'):
        return '%s %#x' % (directive, number(args, labels))
    if directive.startswith('raw-'):
        return '%s %#x' % (directive, number(args, labels))
    if directive in ('tma', 'mwait'):
        a, b = args.split(',')
        return '%s %#x %#x' % (directive, number(a, labels), number(b, labels))
    if directive == 'exstop':
        return 'exstop %d' % (args == 'ip')
    if directive == 'pwre':
        parts = [p.strip() for p in args.split(',')]
        m = re.fullmatch(r'c(\d+)(?:\.(\d+))?', parts[0])
        return 'pwre %d %d %d' % (int(m.group(1)), int(m.group(2) or 0), len(parts) > 1)
    if directive == 'pwrx':
        wr, states = args.split(':')
        last, deepest = (int(s.strip()[1:]) for s in states.split(','))
        return 'pwrx %d %d %d' % (last, deepest, ('int', 'st', 'hw').index(wr.strip()))
    if directive == 'ptw':
        size, rest = args.split(':')
        parts = [p.strip() for p in rest.split(',')]
        return 'ptw %d %#x %d' % (int(size, 0), number(parts[0], labels), len(parts) > 1)
    raise Unsupported('@pt %s is not a packet directive this script knows' % directive)


def main():
    src, out = sys.argv[1], sys.argv[2]
    name = os.path.basename(src)[:-len('.ptt')]
    lines = open(src).read().splitlines()
    if any(re.search(r'@sb\s', line) for line in lines):
        print('%s: sideband directives (@sb) are not used here' % name, file=sys.stderr)
        return 2
    sections, labels = assemble(src, out, name)
    pkts = []
    try:
        for line in lines:
            if ';' not in line or '@pt' not in line:
                continue
            m = DIRECTIVE.search(line)
            if not m:
                raise ValueError('cannot read %r' % line)
            if m.group(1).startswith('.exp'):
                break
            pkts.append(packet(m.group(1), m.group(2), labels))
    except Unsupported as e:
        print('%s: %s' % (name, e), file=sys.stderr)
        return 2
    with open(os.path.join(out, name + '.img'), 'w') as f:
        for s in sections:
            f.write('%#x %#x %#x\n' % s)
    with open(os.path.join(out, name + '.pkt'), 'w') as f:
        f.write('\n'.join(pkts) + '\n')
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except (ValueError, KeyError, AttributeError, subprocess.CalledProcessError) as e:
        print('%s: %s' % (sys.argv[1], e), file=sys.stderr)
        sys.exit(1)
