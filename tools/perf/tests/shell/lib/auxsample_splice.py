#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Events added to or taken out of a simulated perf.data (auxsample_simulate.sh).

  auxsample_splice.py exec SRC OUT N
      after the N-th AUX sample (from 1), a PERF_RECORD_COMM exec of its
      process and the MMAP2 of its program again, half way to the next
      one: the process exec()ed the same program there, as the
      simulator, which starts a new stream at an exec, never records.
  auxsample_splice.py drop SRC OUT N
      the AUX samples before the N-th taken out.
  auxsample_splice.py remap SRC OUT PID FILE
      after every other AUX sample, an MMAP2 of FILE where the program
      is, of its process's thread but with PID in the event's pid field
      (a crafted file: perf applies it to the thread's process), another
      inode each time: with the program's own name, dsos of one name.
  auxsample_splice.py wrap SRC OUT N FILE
      after the N-th AUX sample, an MMAP2 of FILE a page below the
      program whose end wraps past the top of memory (a crafted file:
      the kernel writes none such).

The records move within the data section; the feature sections after
it move with them.  Only the layouts the simulator writes are read: the
sample's IDENTIFIER, IP, TID and TIME first, sample_id_all on.
"""

import struct
import sys

from auxsample_mutants import AUXTRACE, PerfData

COMM, MMAP2, SAMPLE = 3, 10, 9
COMM_EXEC = 1 << 13                     # PERF_RECORD_MISC_COMM_EXEC
MMAP_BUILD_ID = 1 << 14                 # PERF_RECORD_MISC_MMAP_BUILD_ID
IP, TID, TIME, ID, CPU, STREAM_ID, IDENTIFIER = (
    1 << 0, 1 << 1, 1 << 2, 1 << 6, 1 << 7, 1 << 9, 1 << 16)
SAMPLE_ID_ALL = 1 << 18                 # in perf_event_attr's flags
INODE = 123456                          # remap's first, on device 8:1


def sample_types(buf):
    """The sample_type of each attr in the file's attrs section."""
    attr_size, off, size = struct.unpack_from('<QQQ', buf, 16)
    types = []
    for a in range(off, off + size, attr_size):
        stype, = struct.unpack_from('<Q', buf, a + 24)
        flags, = struct.unpack_from('<Q', buf, a + 40)
        if not flags & SAMPLE_ID_ALL:
            sys.exit('auxsample_splice.py: an event without sample_id_all')
        types.append(stype)
    if len({t & (IDENTIFIER | IP | TID | TIME | ID | STREAM_ID | CPU) for t in types}) != 1:
        sys.exit('auxsample_splice.py: events whose samples differ in their first fields')
    return types


def field(stype, before):
    """The offset in a sample of the field after those of @before that are in @stype."""
    return 8 + 8 * sum(1 for f in before if stype & f)


class Splice:
    def __init__(self, path):
        with open(path, 'rb') as f:
            self.buf = f.read()
        self.pd = PerfData(self.buf)
        self.stype = sample_types(self.buf)[0]
        if not self.stype & TIME or not self.stype & TID:
            sys.exit('auxsample_splice.py: samples without TID or TIME')
        self.aux = [r for r in self.pd.records if r[1] == SAMPLE and self.has_aux(r)]
        # the sample_id trailer's fields after TIME
        self.after_time = sum(1 for f in (ID, STREAM_ID, CPU, IDENTIFIER) if self.stype & f)

    def has_aux(self, rec):
        return any(rec[0] < a < rec[0] + rec[2] for a in self.pd.aux_sizes)

    def time(self, rec):
        off = rec[0] + field(self.stype, (IDENTIFIER, IP, TID))
        return struct.unpack_from('<Q', self.buf, off)[0]

    def pid(self, rec):
        return struct.unpack_from('<I', self.buf, rec[0] + field(self.stype, (IDENTIFIER, IP)))[0]

    def retimed(self, rec, time):
        """@rec, a record with a sample_id trailer, at @time."""
        b = bytearray(self.buf[rec[0]:rec[0] + rec[2]])
        struct.pack_into('<Q', b, rec[2] - 8 * (self.after_time + 1), time)
        return bytes(b)

    def remapped(self, rec, pid, name, time, inode):
        """@rec, an MMAP2, of @name (no build-id, @inode) and the event's @pid, at @time."""
        b = self.retimed(rec, time)
        path = name.encode() + b'\0'
        path += b'\0' * (-len(path) % 8)
        # the fixed fields, the name, the sample_id trailer from TID on
        m = bytearray(b[:72] + path + b[len(b) - 8 * (self.after_time + 2):])
        misc, = struct.unpack_from('<H', m, 4)
        struct.pack_into('<HH', m, 4, misc & ~MMAP_BUILD_ID, len(m))
        struct.pack_into('<I', m, 8, pid)
        # another file's device and inode, not the program's build-id
        struct.pack_into('<IIQQ', m, 40, 8, 1, inode, 0)
        return bytes(m)

    def first(self, rtype, pid, pred=lambda b: True):
        for r in self.pd.records:
            b = self.buf[r[0]:r[0] + r[2]]
            if r[1] == rtype and struct.unpack_from('<I', b, 8)[0] == pid and pred(b):
                return r
        sys.exit('auxsample_splice.py: no record of type %d for pid %d' % (rtype, pid))

    def text(self, pid):
        """The program's own map: the first executable MMAP2 of process @pid."""
        return self.first(MMAP2, pid, lambda b: struct.unpack_from('<I', b, 64)[0] & 4)

    def write(self, out, at, cut, add):
        """The file with the @cut bytes at @at replaced by @add."""
        data_off, data_size = struct.unpack_from('<QQ', self.buf, 40)
        delta = len(add) - cut
        feats = data_off + data_size
        nr = sum(bin(w).count('1') for w in struct.unpack_from('<4Q', self.buf, 72))
        b = bytearray(self.buf[:at] + add + self.buf[at + cut:])
        struct.pack_into('<Q', b, 48, data_size + delta)
        for i in range(nr):
            sec = feats + delta + 16 * i
            off, = struct.unpack_from('<Q', b, sec)
            struct.pack_into('<Q', b, sec, off + delta)
        with open(out, 'wb') as f:
            f.write(b)


def remap(s, out, pid, name):
    """An MMAP2 of @name over the program after every other AUX sample, with @pid."""
    if len(s.aux) < 2:
        sys.exit('auxsample_splice.py: fewer than 2 AUX samples')
    text = s.text(s.pid(s.aux[0]))
    data_off, = struct.unpack_from('<Q', s.buf, 40)
    parts, last = [], data_off
    for i in range(0, len(s.aux) - 1, 2):
        at = s.aux[i][0] + s.aux[i][2]
        parts += [s.buf[last:at],
                  s.remapped(text, pid, name, (s.time(s.aux[i]) + s.time(s.aux[i + 1])) // 2,
                             INODE + i)]
        last = at
    s.write(out, data_off, last - data_off, b''.join(parts))


def wrap(s, out, n, name):
    """After the @n-th AUX sample, an MMAP2 of @name below the program, its end past 2^64."""
    if not 0 < n < len(s.aux):
        sys.exit('auxsample_splice.py: not a file with more than %d AUX samples' % n)
    before, after = s.aux[n - 1], s.aux[n]
    pid = s.pid(before)
    m = bytearray(s.remapped(s.text(pid), pid, name, (s.time(before) + s.time(after)) // 2,
                             INODE))
    start = struct.unpack_from('<Q', m, 16)[0] - 4096
    struct.pack_into('<QQQ', m, 16, start, (1 << 64) - start, 0)
    s.write(out, before[0] + before[2], 0, bytes(m))


def main():
    if sys.argv[1:2] == ['remap'] and len(sys.argv) == 6:
        remap(Splice(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return
    if sys.argv[1:2] == ['wrap'] and len(sys.argv) == 6:
        wrap(Splice(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return
    if len(sys.argv) != 5 or sys.argv[1] not in ('exec', 'drop'):
        sys.exit(__doc__)
    s = Splice(sys.argv[2])
    n = int(sys.argv[4])
    if any(r[1] == AUXTRACE for r in s.pd.records) or not 0 < n < len(s.aux):
        sys.exit('auxsample_splice.py: not a sample-mode file with more than %d AUX samples' % n)
    before, after = s.aux[n - 1], s.aux[n]
    if sys.argv[1] == 'drop':
        # Only AUX samples go: the records between them stay where they are.
        aux = set(s.aux)
        kept = b''.join(s.buf[r[0]:r[0] + r[2]] for r in s.pd.records
                        if s.aux[0][0] <= r[0] < after[0] and r not in aux)
        s.write(sys.argv[3], s.aux[0][0], after[0] - s.aux[0][0], kept)
        return
    pid = s.pid(before)
    when = (s.time(before) + s.time(after)) // 2
    comm = bytearray(s.retimed(s.first(COMM, pid), when))
    misc, = struct.unpack_from('<H', comm, 4)
    struct.pack_into('<H', comm, 4, misc | COMM_EXEC)
    add = bytes(comm) + s.retimed(s.text(pid), when)
    s.write(sys.argv[3], before[0] + before[2], 0, bytes(add))


if __name__ == '__main__':
    main()
