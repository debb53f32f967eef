# SPDX-License-Identifier: GPL-2.0
"""Compare the virtual LBR of simulated AUX samples with the ground truth.

usage: auxsample_truth.py [--auxsample [--callers]|--exact|--gaps] <perf.data> <depth> <perf> [args...]

Without --auxsample the branch stacks come from perf's own decoder
('perf script --itrace=L<depth> -F ip,brstack'); with it from
'perf auxsample script --depth <depth>' (libauxsample), which must match
exactly: it shows no trace begins or ends.  With --callers its call
chains too (the return addresses it prints as callers) must be the
truth's stack, innermost first, or the innermost part of it: a decode
knows the calls its trace saw made, no others.

With --exact every sample whose truth has <depth> branches must show them
all, the newest <depth> true branches and no fewer (perf's decoder is run
with twice the depth, so that the trace begins and ends it shows still
leave <depth> branches): what a timed decoder gets wrong when it cannot
tell which branches came before the sample.

With --gaps (perf auxsample script only) the code of the kernel was not
to be found: its stretches are gaps.  The branches between two gaps must
be true ones, in the truth's order, and those before the newest gap the
truth's newest: nothing made up, nothing out of order.

Reads <perf.data>.truth (perf auxsample simulate) and the branch stacks
that 'perf script --itrace=L<depth> -F ip,brstack' gives, and checks, sample
by sample, that perf's entries are the newest true branches, in order: it
may give fewer (the snippet's first sync point limits it), never a wrong
one.  perf also shows where the trace stopped and started again: a syscall
is (syscall ip -> 0) as in the truth, then a trace begin (0 -> return
address); an earlier sample's PMI is a trace end and begin at the same IP,
(ip -> 0) then (0 -> ip), which is no branch at all.  Trace begins, and
trace ends at the IP of the trace begin that follows them, are left out.

It is also the documented reader of the ground truth files:

usage: auxsample_truth.py --dump <perf.data>.truth      the truth as text
       auxsample_truth.py --samples <perf.data>.truth   how many samples

The text is one line per item, as version 1 of the file was:
    sample <nr> pid <pid> tid <tid> cpu <cpu> time <time> ip <hex>
    branch <from hex> <to hex> <kind>	newest first
    stack <return address hex>		innermost first
    end
The file itself (version 2) is described in util/auxsample-sim-truth.h
and in the SIMULATE section of perf-auxsample(1); read_truth() and
iter_truth() below read both versions.
"""
import collections
import io
import itertools
import struct
import subprocess
import sys
import tempfile

TRUTH_MAGIC = b'AUXTRUTH'
TRUTH_V1 = b'# perf auxsample simulate ground truth v1'
TRUTH_KINDS = ('cond', 'jump', 'ind_jump', 'call', 'ind_call', 'ret', 'far', 'intr')
MASK64 = (1 << 64) - 1


class TruthError(Exception):
    """A truth file that is not whole or not one."""


class _Stream:
    """LEB128 numbers and bytes from a file, read a chunk at a time: a
    truth file of any size takes no more memory than one chunk."""

    CHUNK = 1 << 20
    LONGEST = 10            # bytes of a 64-bit LEB128 number

    def __init__(self, f, pos):
        self.f, self.data, self.pos, self.base, self.eof = f, b'', 0, pos, False
        f.seek(pos)

    def _fill(self):
        """At least LONGEST bytes from pos on, or all that is left."""
        if self.eof or len(self.data) - self.pos >= self.LONGEST:
            return
        more = self.f.read(self.CHUNK)
        self.eof = not more
        self.base += self.pos
        self.data, self.pos = self.data[self.pos:] + more, 0

    def offset(self):
        return self.base + self.pos

    def at_end(self):
        self._fill()
        return self.pos >= len(self.data)

    def byte(self):
        self._fill()
        if self.pos >= len(self.data):
            raise TruthError('truncated at offset %d: a record is cut short' % self.offset())
        self.pos += 1
        return self.data[self.pos - 1]

    def u(self):
        self._fill()
        data, pos, shift, value = self.data, self.pos, 0, 0
        while True:
            if pos >= len(data):
                raise TruthError('truncated at offset %d: a record is cut short'
                                 % self.offset())
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7f) << shift
            shift += 7
            if not byte & 0x80:
                break
            if shift > 63:
                raise TruthError('bad number at offset %d' % self.offset())
        self.pos = pos
        return value

    def s(self):
        z = self.u()
        return (z >> 1) ^ -(z & 1)


class _Thread:
    def __init__(self, nr_max):
        self.branches = collections.deque(maxlen=nr_max)
        self.base = 0
        self.stack = []


def _iter_v2(f, depth):
    """Samples of a version 2 file, each a dict (see iter_truth)."""
    head = f.read(16)
    if len(head) < 16:
        raise TruthError('truncated header')
    version, nr_max = struct.unpack_from('<II', head, 8)
    if version != 2:
        raise TruthError('version %d, this reader knows 1 and 2' % version)
    b, threads, count = _Stream(f, 16), {}, 0
    while not b.at_end():
        rec = b.byte()
        if rec == ord('T'):
            threads[b.u()] = _Thread(nr_max)
        elif rec == ord('B'):
            t = threads.get(b.u())
            skip, n = b.u(), b.u()
            if t is None:
                raise TruthError('branches of a thread not announced')
            if skip:
                t.branches.clear()
            for _ in range(n):
                kind = b.u()
                frm = (t.base + b.s()) & MASK64
                to = (frm + b.s()) & MASK64
                t.base = to or frm
                t.branches.append((frm, to, kind))
        elif rec == ord('S'):
            nr, pid, tid, cpu, time, ip, nbr = (b.u() for _ in range(7))
            t = threads.get(tid)
            if t is None or nbr > len(t.branches):
                raise TruthError('sample %d: branches that the file does not hold' % nr)
            kept, n = b.u(), b.u()
            if kept > len(t.stack):
                raise TruthError('sample %d: a stack deeper than the last' % nr)
            del t.stack[kept:]
            prev = t.stack[-1] if t.stack else 0
            for _ in range(n):
                prev = (prev + b.s()) & MASK64
                t.stack.append(prev)
            newest = list(itertools.islice(reversed(t.branches),
                                           nbr if depth is None else min(nbr, depth)))
            count += 1
            yield {'nr': nr, 'pid': pid, 'tid': tid, 'cpu': cpu, 'time': time,
                   'ip': ip, 'br': [(e[0], e[1]) for e in newest],
                   'kind': [TRUTH_KINDS[e[2]] if e[2] < len(TRUTH_KINDS) else str(e[2])
                            for e in newest],
                   'stack': t.stack[::-1]}
        elif rec == ord('E'):
            if b.u() != count or not b.at_end():
                raise TruthError('the end record does not close the file')
            return
        else:
            raise TruthError('unknown record %#x at offset %d' % (rec, b.offset() - 1))
    raise TruthError('truncated: no end record after %d samples (the run was killed?)'
                     % count)


def _iter_v1(text):
    cur = None
    for line in text:
        w = line.split()
        if not w or w[0].startswith('#'):
            continue
        if w[0] == 'sample':
            cur = {'ip': int(w[w.index('ip') + 1], 16), 'br': [], 'kind': [], 'stack': []}
            for key in ('nr', 'pid', 'tid', 'cpu', 'time'):
                name = 'sample' if key == 'nr' else key
                cur[key] = int(w[w.index(name) + 1])
        elif w[0] == 'branch':
            cur['br'].append((int(w[1], 16), int(w[2], 16)))
            cur['kind'].append(w[3])
        elif w[0] == 'stack':
            cur['stack'].append(int(w[1], 16))
        elif w[0] == 'end':
            yield cur


def iter_truth(path, depth=None):
    """The samples of a truth file, in order: dicts with nr, pid, tid, cpu,
    time, ip, br (the true branches as (from, to), newest first, at most
    @depth of them), kind (theirs) and stack (return addresses, innermost
    first).  It reads as it goes: only the sample it yields is in memory.
    Raises TruthError on a file that is cut short or not a truth file,
    when the iteration reaches where it is cut."""
    with open(path, 'rb') as f:
        magic = f.read(len(TRUTH_MAGIC))
        if magic == TRUTH_MAGIC:
            f.seek(0)
            yield from _iter_v2(f, depth)
            return
        f.seek(0)
        if f.read(len(TRUTH_V1)) == TRUTH_V1:
            f.seek(0)
            for t in _iter_v1(io.TextIOWrapper(f)):
                if depth is not None:
                    t['br'], t['kind'] = t['br'][:depth], t['kind'][:depth]
                yield t
            return
    raise TruthError('not a perf auxsample simulate ground truth')


def read_truth(path):
    return list(iter_truth(path))


def _hex(v):
    return '%#x' % v if v else '0'    # as C's %#x


def dump_truth(path, out):
    for t in iter_truth(path):
        out.write('sample %d pid %d tid %d cpu %d time %d ip %s\n'
                  % (t['nr'], t['pid'], t['tid'], t['cpu'], t['time'], _hex(t['ip'])))
        for (frm, to), kind in zip(t['br'], t['kind']):
            out.write('branch %s %s %s\n' % (_hex(frm), _hex(to), kind))
        for addr in t['stack']:
            out.write('stack %s\n' % _hex(addr))
        out.write('end\n')


class PerfError(Exception):
    """perf failed: its exit status and the end of what it said."""


def _lines(cmd):
    """The lines @cmd writes, as it writes them; PerfError if it fails.
    What it says on stderr goes to a file, so that it cannot block."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            yield from proc.stdout
        finally:
            # Left before the end (a mismatch): perf need not go on.
            if proc.poll() is None:
                proc.kill()
            proc.stdout.close()
            rc = proc.wait()
        if rc:
            err.seek(0)
            said = err.read().decode(errors='replace').strip().splitlines()[-3:]
            raise PerfError('%s exited %d: %s' % (' '.join(cmd[:2]), rc, ' / '.join(said)))


def iter_perf(perf, data, depth, args):
    """The samples of 'perf script --itrace=L<depth>', as it prints them:
    dicts with ip and br (trace begins and ends left out)."""
    cmd = [perf, 'script', '-i', data, '--itrace=L%d' % depth,
           '-F', 'ip,brstack'] + args
    for line in _lines(cmd):
        f = line.split()
        if not f:
            continue
        br = [tuple(int(x, 16) for x in e.split('/')[:2]) for e in f[1:]]
        yield {'ip': int(f[0], 16), 'br': without_trace_gaps(br)}


def iter_auxsample(perf, data, depth, args, gaps=False):
    """The samples of 'perf auxsample script --depth <depth>', as it prints
    them: dicts with ip, br and stack (the callers' return addresses,
    innermost first); with @gaps each entry says whether it is a gap,
    (from, to, is_gap)."""
    cmd = [perf, 'auxsample', 'script', '-i', data, '--depth', str(depth)] + args
    cur = None
    for line in _lines(cmd):
        f = line.split()
        if not f:
            continue
        if not line.startswith('\t'):
            if cur:
                yield cur
            # instructions:u, instructions when the kernel is traced,
            # or the tracepoint's samples
            ev = [x for x in f if x in ('instructions:u:', 'instructions:',
                                        'sched:sched_switch:')]
            ip = f[f.index(ev[0]) + 1] if ev else '0'
            cur = {'ip': int(ip, 16), 'br': [], 'stack': []}
        elif f[0] == 'caller':
            if cur is None:
                raise PerfError('a caller before the first sample')
            cur['stack'].append(0 if f[1] == '?' else int(f[1], 16))
        elif f[0] == 'branch':
            if cur is None:
                raise PerfError('a branch before the first sample')
            arrow = f.index('->')
            addr = [0 if x == '?' else int(x, 16) for x in (f[1], f[arrow + 1])]
            cur['br'].append(tuple(addr) + ((f[-1] == 'gap',) if gaps else ()))
    if cur:
        yield cur


def read_perf(perf, data, depth, args):
    return list(iter_perf(perf, data, depth, args))


def read_auxsample(perf, data, depth, args, gaps=False):
    return list(iter_auxsample(perf, data, depth, args, gaps))


KERNEL_START = 1 << 63


def without_trace_gaps(br):
    """Newest first: drop (0 -> b), and (b -> 0) right after it.

    With kernel tracing the AUX copy stops the trace at one WRMSR and
    starts it at the next (pt_event_snapshot_aux()): a trace end and a
    trace begin at two kernel IPs, no branch either."""
    out, begin = [], None
    for e in br:
        if e[0] == 0:
            begin = e[1]
            continue
        if not (e[1] == 0 and begin is not None and
                (e[0] == begin or min(e[0], begin) >= KERNEL_START)):
            out.append(e)
        begin = None
    return out




class _Pairs:
    """The samples of the truth and of perf side by side, one pair at a
    time; counts them all, to the end of both, even after a mismatch."""

    def __init__(self, truth, got):
        self.truth, self.got = truth, got
        self.nr_truth = self.nr_got = 0

    def __iter__(self):
        for t in self.truth:
            self.nr_truth += 1
            p = next(self.got, None)
            if p is None:
                break
            self.nr_got += 1
            yield self.nr_got - 1, t, p

    def count_rest(self):
        self.nr_truth += sum(1 for _ in self.truth)
        self.nr_got += sum(1 for _ in self.got)

    def counts_differ(self):
        """Says so when the counts differ or there are no samples."""
        self.count_rest()
        if self.nr_truth != self.nr_got or not self.nr_truth:
            print('%d samples in the truth, %d from perf' % (self.nr_truth, self.nr_got))
            return True
        return False


def compare_exact(pairs, depth):
    full = equal = 0
    first = None
    for i, t, p in pairs:
        if len(t['br']) < depth:
            continue
        full += 1
        if p['br'][:depth] == t['br'][:depth]:
            equal += 1
        elif first is None:
            first = 'first: sample %d ip %#x' % (i, t['ip'])
    if pairs.counts_differ():
        return 1
    print('%d of %d samples with their newest %d true branches' % (equal, full, depth))
    if first:
        print(first)
    return 0 if full and equal == full else 1


def find_run(truth, run, pos, anchored):
    """Where @run is in @truth at or after @pos (at @pos if anchored)."""
    last = pos if anchored else len(truth) - len(run)
    for i in range(pos, last + 1):
        if truth[i:i + len(run)] == run:
            return i
    return -1


def compare_gaps(pairs, depth):
    """Between gaps, runs of true branches in the truth's order."""
    compared = gaps = 0
    for i, t, p in pairs:
        runs, run = [], []
        for e in p['br']:
            if e[2]:
                runs.append(run)
                run = []
                gaps += 1
            else:
                run.append(e[:2])
        runs.append(run)
        pos = 0
        for k, run in enumerate(runs):
            if not run:
                continue
            at = find_run(t['br'], run, pos, k == 0)
            if at < 0:
                if not pairs.counts_differ():
                    print('sample %d ip %#x: branches %s are not the truth\'s %s' %
                          (i, t['ip'], ['%#x->%#x' % e for e in run[:4]],
                           'newest' if k == 0 else 'in order'))
                return 1
            pos = at + len(run)
            compared += len(run)
    if pairs.counts_differ():
        return 1
    print('%d samples, %d true branches between %d gaps' % (pairs.nr_truth, compared, gaps))
    return 0 if compared and gaps else 1


def compare(pairs, depth, callers=False):
    """perf's entries are the newest true branches, in order, or fewer;
    with @callers its callers the innermost of the truth's stack."""
    compared = short = known = 0
    for i, t, p in pairs:
        want = t['br']
        if t['ip'] != p['ip']:
            if not pairs.counts_differ():
                print('sample %d: ip %#x, perf says %#x' % (i, t['ip'], p['ip']))
            return 1
        if callers:
            chain = p['stack']
            if chain != t['stack'][:len(chain)]:
                if not pairs.counts_differ():
                    print('sample %d ip %#x: callers %s, truth %s' %
                          (i, t['ip'], ['%#x' % a for a in chain[:4]],
                           ['%#x' % a for a in t['stack'][:4]]))
                return 1
            known += len(chain)
        for j, e in enumerate(p['br']):
            if j >= len(want) or want[j] != e:
                if not pairs.counts_differ():
                    print('sample %d ip %#x: entry %d is %#x -> %#x, truth %s' %
                          (i, t['ip'], j, e[0], e[1],
                           '%#x -> %#x' % want[j] if j < len(want) else 'has no more'))
                return 1
        compared += len(p['br'])
        short += len(p['br']) < len(want)
    if pairs.counts_differ():
        return 1
    print('%d samples, %d branches equal to the truth, %d samples with fewer'
          ' (perf shows trace begins and ends, or the sync point limits it)'
          % (pairs.nr_truth, compared, short))
    if callers:
        print('%d callers, each in the truth\'s stack' % known)
    return 0 if compared and (known or not callers) else 1


def main():
    args = sys.argv[1:]
    if args and args[0] in ('--dump', '--samples'):
        try:
            if args[0] == '--dump':
                dump_truth(args[1], sys.stdout)
            else:
                print(sum(1 for _ in iter_truth(args[1])))
        except (TruthError, OSError) as e:
            print('%s: %s' % (args[1], e), file=sys.stderr)
            return 1
        return 0
    ours = exact = gaps = callers = False
    while args[0] in ('--auxsample', '--exact', '--gaps', '--callers'):
        ours |= args[0] in ('--auxsample', '--gaps', '--callers')
        exact |= args[0] == '--exact'
        gaps |= args[0] == '--gaps'
        callers |= args[0] == '--callers'
        args = args[1:]
    if callers and (exact or gaps):
        print('--callers goes with neither --exact nor --gaps', file=sys.stderr)
        return 2
    data, depth, perf = args[0], int(args[1]), args[2]
    # Between gaps the runs may go further back than depth in the truth.
    truth = iter_truth(data + '.truth', None if gaps else depth)
    if ours:
        got = iter_auxsample(perf, data, depth, args[3:], gaps)
    else:
        got = iter_perf(perf, data, depth * 2 if exact else depth, args[3:])
    pairs = _Pairs(truth, got)
    try:
        if gaps:
            return compare_gaps(pairs, depth)
        if exact:
            return compare_exact(pairs, depth)
        return compare(pairs, depth, callers)
    except (TruthError, OSError) as e:
        print('%s.truth: %s' % (data, e))
        return 1
    except PerfError as e:
        print(e)
        return 1
    finally:
        got.close()


if __name__ == '__main__':
    sys.exit(main())
