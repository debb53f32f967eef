#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A perf.data as perf record -z writes it (auxsample_compressed.sh).

  auxsample_compress.py SRC OUT

Writes OUT: SRC's events packed into PERF_RECORD_COMPRESSED records, zstd
frames of at most CHUNK bytes of whole events each (by the zstd program),
except PERF_RECORD_AUXTRACE and its trace, which perf record never
compresses; and the HEADER_COMPRESSED feature, which tells perf's reader
how large a frame decompresses at most.  Exit 2 without zstd.
"""

import shutil
import struct
import subprocess
import sys

HDR_SIZE = 104                  # struct perf_file_header
AUXTRACE, COMPRESSED = 71, 81
HEADER_COMPRESSED = 27
CHUNK = 32 * 1024               # events per frame, in bytes: a frame fits a record
MMAP_LEN = 512 * 1024           # perf record -z's mmap_len: CHUNK fits in it


def zstd(data):
    return subprocess.run(['zstd', '-q', '-c', '-3'], input=data, check=True,
                          capture_output=True).stdout


def records(buf, off, end):
    """(offset, size, type) of each record in [off, end), AUXTRACE with its trace."""
    while off + 8 <= end:
        rtype, _, rsize = struct.unpack_from('<IHH', buf, off)
        if rsize < 8:
            sys.exit('bad record at %#x' % off)
        size = rsize
        if rtype == AUXTRACE:
            size += struct.unpack_from('<Q', buf, off + 8)[0]
        yield off, size, rtype
        off += size


def compressed(payload):
    rec = struct.pack('<IHH', COMPRESSED, 0, 8 + len(payload)) + payload
    if len(rec) > 0xffff:
        sys.exit('a frame does not fit in a record: make CHUNK smaller')
    return rec


def pack(buf, off, end):
    out, pending = [], b''
    for roff, size, rtype in records(buf, off, end):
        rec = buf[roff:roff + size]
        if rtype == AUXTRACE or len(pending) + size > CHUNK:
            if pending:
                out.append(compressed(zstd(pending)))
            pending = b''
        if rtype == AUXTRACE:
            out.append(rec)
        else:
            pending += rec
    if pending:
        out.append(compressed(zstd(pending)))
    return b''.join(out)


def main():
    if not shutil.which('zstd'):
        sys.exit(2)
    src, dst = sys.argv[1:3]
    buf = open(src, 'rb').read()
    if buf[:8] != b'PERFILE2':
        sys.exit('%s: not a perf.data file' % src)
    data_off, data_size = struct.unpack_from('<QQ', buf, 40)
    feats = int.from_bytes(buf[72:104], 'little')
    bits = [b for b in range(256) if feats >> b & 1]
    table = data_off + data_size
    secs = [struct.unpack_from('<QQ', buf, table + 16 * i) for i in range(len(bits))]
    sections = {b: buf[o:o + s] for b, (o, s) in zip(bits, secs)}
    # version 1, zstd (1), level 3, ratio 1: the reader needs mmap_len only
    sections[HEADER_COMPRESSED] = struct.pack('<5I', 1, 1, 3, 1, MMAP_LEN)
    feats |= 1 << HEADER_COMPRESSED
    data = pack(buf, data_off, data_off + data_size)
    head = bytearray(buf[:data_off])
    struct.pack_into('<QQ', head, 40, data_off, len(data))
    head[72:104] = feats.to_bytes(32, 'little')
    bits = sorted(sections)
    pos = data_off + len(data) + 16 * len(bits)
    table, blobs = b'', b''
    for b in bits:
        table += struct.pack('<QQ', pos + len(blobs), len(sections[b]))
        blobs += sections[b]
    open(dst, 'wb').write(bytes(head) + data + table + blobs)


if __name__ == '__main__':
    main()
