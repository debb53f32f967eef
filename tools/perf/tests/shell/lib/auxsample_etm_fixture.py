#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""CoreSight ETM full trace with samples beside it, from an OpenCSD snapshot.

No shared recording has sampled events beside ETM trace, so this makes
the perf.data that 'perf record -Acs_etm' would write on a kernel without
cs_etm AUX snapshots, from a real ETE trace with timestamps (OpenCSD's
ts_marker snapshot): its cs_etm AUXTRACE_INFO (the ETE's registers,
ts_source 1: kernel time), a PERF_RECORD_TIME_CONV that makes its
timestamps perf time as they are, the snapshot's memory dumps mapped
into one process, the raw (TRBE) trace in one PERF_RECORD_AUXTRACE of
CPU 0, and cycles samples on CPU 0 just after each distinct timestamp
(and one before the first).  The trace and the registers are the
snapshot's, unchanged.

  make SNAPSHOT PPL OUT [TS_SOURCE]
                          write OUT and OUT.expect: per sample, its time
                          and the taken branches trc_pkt_lister's output
                          (PPL) shows before the last timestamp not
                          later than it: what its window must decode to;
                          TS_SOURCE other than 1 (the default) says the
                          timestamps are not the kernel's time
  check EXPECT JSON DEPTH perf auxsample script --json's branches (JSON)
                          against them, DEPTH deep
"""

import configparser
import json
import os
import re
import struct
import sys

PID = 4321
CPU = 0
PMU_TYPE = 4245
ID_ETM, ID_CYCLES = 1, 2

PERF_RECORD_MMAP2 = 10
PERF_RECORD_COMM = 3
PERF_RECORD_AUX = 11
PERF_RECORD_SAMPLE = 9
PERF_RECORD_AUXTRACE_INFO = 70
PERF_RECORD_AUXTRACE = 71
PERF_RECORD_TIME_CONV = 79
PERF_RECORD_MISC_USER = 2
PERF_AUXTRACE_CS_ETM = 3
PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW = 0x0100
HEADER_AUXTRACE = 18

# IDENTIFIER | IP | TID | TIME | CPU | PERIOD
SAMPLE_TYPE = 0x10000 | 0x1 | 0x2 | 0x4 | 0x80 | 0x100
ATTR_SIZE = 136
CS_ETE_MAGIC = 0x5050505050505050


def ini(path):
    c = configparser.ConfigParser(strict=False)
    c.optionxform = str
    c.read(path)
    return c


def reg(c, name):
    for key, value in c['regs'].items():
        if key.split('(')[0].strip().upper() == name:
            return int(value, 0)
    return 0


def event(etype, misc, body):
    return struct.pack('<IHH', etype, misc, 8 + len(body)) + body


def trailer(time):
    # sample_id_all: TID, TIME, CPU, IDENTIFIER
    return struct.pack('<IIQIIQ', PID, PID, time, CPU, 0, ID_CYCLES)


def pad8(b):
    return b + b'\0' * (-len(b) % 8)


def attr(etype, config, flags):
    a = struct.pack('<IIQQQQQ', etype, ATTR_SIZE, config, 0, SAMPLE_TYPE, 0, flags)
    return a + b'\0' * (ATTR_SIZE - len(a))


def timestamps(ppl):
    """(offset, value, branches before it) of each TIMESTAMP element."""
    out = []
    for line in open(ppl):
        m = re.match(r'Idx:(\d+); ID:\w+; OCSD_GEN_TRC_ELEM_TIMESTAMP\( \[ TS=0x([0-9a-f]+)', line)
        if m:
            out.append((int(m.group(1)), int(m.group(2), 16)))
    return out


def kind(typ, rest):
    if typ == 'BR':
        if 'b+link' in rest:
            return 'call'
        return 'cond' if '<cond>' in rest else 'jump'
    if 'b+link' in rest:
        return 'ind_call'
    if 'A64:eret' in rest:
        return 'far'
    if 'A64:ret' in rest or 'V7:impl ret' in rest:
        return 'ret'
    return 'ind_jump'


def branches(ppl):
    """The taken branches trc_pkt_lister's elements show, in order, each
    with the number of TIMESTAMP elements before it was known; as
    libauxsample's unit tests derive them (test-etm-real.c)."""
    out, pending, nts = [], None, 0

    def add(to):
        nonlocal pending
        if pending:
            out.append(dict(pending, to=to, ts=nts))
        pending = None

    for line in open(ppl):
        m = re.match(r'Idx:\d+; ID:\w+; OCSD_GEN_TRC_ELEM_(\w+)\((.*)', line)
        if not m:
            continue
        elem, rest = m.groups()
        if elem == 'TIMESTAMP':
            nts += 1
        elif elem == 'INSTR_RANGE':
            r = re.match(r'exec range=0x([0-9a-f]+):\[0x([0-9a-f]+)\] num_i\(\d+\) '
                         r'last_sz\((\d+)\) \(ISA=\w+\) (\w) (\S+)(.*)', rest)
            st, en, sz = int(r.group(1), 16), int(r.group(2), 16), int(r.group(3))
            add(st)
            if r.group(4) == 'E' and r.group(5) in ('BR', 'iBR'):
                pending = {'from': en - sz, 'kind': kind(r.group(5), r.group(6))}
        elif elem == 'EXCEPTION':
            ret = int(re.match(r'pref ret addr:0x([0-9a-f]+)', rest).group(1), 16)
            add(ret if 'prev br tgt' in rest else None)
            pending = {'from': ret, 'kind': 'intr'}
        elif elem == 'ADDR_NACC':
            add(int(re.match(r' 0x([0-9a-f]+)', rest).group(1), 16))
        elif elem in ('NO_SYNC', 'TRACE_ON', 'EO_TRACE', 'ADDR_UNKNOWN', 'I_RANGE_NOPATH'):
            add(None)
    return out


def make(snapdir, ppl, out, ts_source=1):
    snap = ini(os.path.join(snapdir, 'snapshot.ini'))
    devs = [ini(os.path.join(snapdir, f)) for f in snap['device_list'].values()]
    ete = next(d for d in devs if d['device'].get('type', '').upper() == 'ETE')
    core = next(d for d in devs if d['device'].get('class', '') == 'core')
    trace = ini(os.path.join(snapdir, snap['trace'].get('metadata', 'trace.ini')))
    buf = trace['trace_buffers']['buffers'].split(',')[0].strip()
    if trace[buf].get('format', '') != 'source_data':
        sys.exit('not a raw (unformatted) trace buffer')
    data = open(os.path.join(snapdir, trace[buf]['file']), 'rb').read()

    ts = timestamps(ppl)
    values = sorted(set(v for _, v in ts))
    # One sample before the first timestamp, one just after each value.
    times = [values[0] - 1] + [v + 1 for v in values]

    ev = b''
    # cs_etm AUXTRACE_INFO, version 1: one ETE, ts_source 1 (kernel time)
    priv = [1, (PMU_TYPE << 32) | 1, 0,
            CS_ETE_MAGIC, CPU, 9,
            reg(ete, 'TRCCONFIGR'), reg(ete, 'TRCTRACEIDR'), reg(ete, 'TRCIDR0'),
            reg(ete, 'TRCIDR1'), reg(ete, 'TRCIDR2'), reg(ete, 'TRCIDR8'),
            reg(ete, 'TRCAUTHSTATUS'), reg(ete, 'TRCDEVARCH'), ts_source & (2**64 - 1)]
    ev += event(PERF_RECORD_AUXTRACE_INFO, 0,
                struct.pack('<II', PERF_AUXTRACE_CS_ETM, 0) + struct.pack('<%dQ' % len(priv), *priv))
    # perf time = timestamp
    ev += event(PERF_RECORD_TIME_CONV, 0, struct.pack('<QQQ', 0, 1, 0))
    ev += event(PERF_RECORD_COMM, PERF_RECORD_MISC_USER,
                struct.pack('<II', PID, PID) + pad8(b'ts_marker\0') + trailer(1))
    for sec in core.sections():
        if not sec.startswith('dump'):
            continue
        path = os.path.abspath(os.path.join(snapdir, core[sec]['file']))
        start = int(core[sec]['address'], 0)
        length = int(core[sec].get('length', '0'), 0) or os.path.getsize(path)
        body = struct.pack('<IIQQQIIQQII', PID, PID, start, length, 0, 0, 0, 0, 0,
                           5, 2) + pad8(path.encode() + b'\0')
        ev += event(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, body + trailer(1))
    ev += event(PERF_RECORD_AUX, 0,
                struct.pack('<QQQ', 0, len(data), PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW) +
                trailer(values[-1]))
    padded = pad8(data)
    auxtrace_at = len(ev)
    ev += event(PERF_RECORD_AUXTRACE, 0,
                struct.pack('<QQQIIII', len(padded), 0, 0, 0, PID, CPU, 0)) + padded
    for t in times:
        ev += event(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
                    struct.pack('<QQIIQIIQ', ID_CYCLES, 0x10000, PID, PID, t, CPU, 0, 1))

    # header, attrs (cs_etm, cycles) with their ids, data, and the
    # HEADER_AUXTRACE feature: the index of the trace, as perf record
    # writes it
    flags_etm = (1 << 5) | (1 << 18)                       # exclude_kernel, sample_id_all
    flags_cyc = (1 << 5) | (1 << 18) | (1 << 8) | (1 << 9) | (1 << 23)  # + mmap, comm, mmap2
    hdr_size = 104
    ids_off = hdr_size
    attrs_off = ids_off + 16
    fattr = ATTR_SIZE + 16
    data_off = attrs_off + 2 * fattr
    feat_off = data_off + len(ev)
    index = struct.pack('<QQQ', 1, data_off + auxtrace_at, 56 + len(padded))
    features = bytearray(32)
    features[HEADER_AUXTRACE // 8] |= 1 << (HEADER_AUXTRACE % 8)
    f = open(out, 'wb')
    f.write(struct.pack('<8sQQQQQQQQ', b'PERFILE2', hdr_size, fattr,
                        attrs_off, 2 * fattr, data_off, len(ev), 0, 0) + bytes(features))
    f.write(struct.pack('<QQ', ID_ETM, ID_CYCLES))
    f.write(attr(PMU_TYPE, 1 << 28, flags_etm) + struct.pack('<QQ', ids_off, 8))
    f.write(attr(0, 0, flags_cyc) + struct.pack('<QQ', ids_off + 8, 8))
    f.write(ev)
    f.write(struct.pack('<QQ', feat_off + 16, len(index)) + index)
    f.close()

    brs = branches(ppl)
    with open(out + '.expect', 'w') as x:
        for t in times:
            # the last timestamp not later than t, by trace order
            k = max((i for i, (_, v) in enumerate(ts) if v <= t), default=-1)
            before = [b for b in brs if b['ts'] <= k] if k >= 0 else []
            # and the branch still open there, its target unknown to the window
            after = [b for b in brs if b['ts'] > k]
            x.write(json.dumps({'time': t, 'ts': k, 'before': before,
                                'open': after[0] if after and k >= 0 else None}) + '\n')


def same(mine, want, open_first):
    """@mine (perf's, newest first) is @want: the open branch, if first,
    by its source and kind alone (the window does not see its target)."""
    if len(mine) != len(want):
        return False
    for i, (m, w) in enumerate(zip(mine, want)):
        to = None if m['to'] is None else int(m['to'], 16)
        if int(m['from'], 16) != w['from'] or m['kind'] != w['kind']:
            return False
        if not (open_first and i == 0) and w['to'] is not None and to != w['to']:
            return False
    return True


def check(expect, result, depth):
    exp = [json.loads(line) for line in open(expect)]
    got = [json.loads(line) for line in open(result) if line.startswith('{')]
    if len(exp) != len(got):
        sys.exit('%d samples, expected %d' % (len(got), len(exp)))
    compared = decoded = 0
    for e, g in zip(exp, got):
        if g['timestamp'] != e['time']:
            sys.exit('sample at %d, expected %d' % (g['timestamp'], e['time']))
        mine = [b for b in g['branches'] if b['kind'] != 'gap']
        if e['ts'] < 0:
            if mine or g['sync']:
                sys.exit('sample at %d, before any timestamp, decoded' % e['time'])
            continue
        want = list(reversed(e['before']))
        if not same(mine, want[:depth], False) and \
           not (e['open'] and same(mine, ([e['open']] + want)[:depth], True)):
            sys.exit('sample at %d: %s; expected the newest %d of %s (open: %s)' %
                     (e['time'], [(b['from'], b['to'], b['kind']) for b in mine[:4]],
                      depth, [(hex(b['from']), b['to'] and hex(b['to']), b['kind'])
                              for b in want[:4]], e['open']))
        compared += len(mine)
        decoded += bool(mine)
    print('%d samples, %d with branches, %d branches as trc_pkt_lister shows them' %
          (len(exp), decoded, compared))


if __name__ == '__main__':
    if len(sys.argv) in (5, 6) and sys.argv[1] == 'make':
        make(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]) if len(sys.argv) == 6 else 1)
    elif len(sys.argv) == 5 and sys.argv[1] == 'check':
        check(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)
