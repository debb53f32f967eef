# SPDX-License-Identifier: GPL-2.0
"""Compare the virtual LBR of simulated AUX samples with the ground truth.

usage: auxsample_truth.py [--auxsample] [--exact|--gaps] <perf.data> <depth> <perf> [args...]

Without --auxsample the branch stacks come from perf's own decoder
('perf script --itrace=L<depth> -F ip,brstack'); with it from
'perf auxsample script --depth <depth>' (libauxsample), which must match
exactly: it shows no trace begins or ends.

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
import struct
import subprocess
import sys

TRUTH_MAGIC = b'AUXTRUTH'
TRUTH_KINDS = ('cond', 'jump', 'ind_jump', 'call', 'ind_call', 'ret', 'far', 'intr')
MASK64 = (1 << 64) - 1


class TruthError(Exception):
    """A truth file that is not whole or not one."""


class _Bytes:
    """LEB128 numbers from a bytes object."""

    def __init__(self, data, pos):
        self.data, self.pos = data, pos

    def u(self):
        data, pos, shift, value = self.data, self.pos, 0, 0
        while True:
            if pos >= len(data):
                raise TruthError('truncated at offset %d: a record is cut short' % self.pos)
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7f) << shift
            shift += 7
            if not byte & 0x80:
                break
            if shift > 63:
                raise TruthError('bad number at offset %d' % self.pos)
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


def _iter_v2(data):
    """Samples of a version 2 file, each a dict (see iter_truth)."""
    if len(data) < 16:
        raise TruthError('truncated header')
    version, nr_max = struct.unpack_from('<II', data, 8)
    if version != 2:
        raise TruthError('version %d, this reader knows 1 and 2' % version)
    b, threads, count = _Bytes(data, 16), {}, 0
    while b.pos < len(data):
        rec = data[b.pos]
        b.pos += 1
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
            newest = [t.branches[-1 - i] for i in range(nbr)]
            count += 1
            yield {'nr': nr, 'pid': pid, 'tid': tid, 'cpu': cpu, 'time': time,
                   'ip': ip, 'br': [(e[0], e[1]) for e in newest],
                   'kind': [TRUTH_KINDS[e[2]] if e[2] < len(TRUTH_KINDS) else str(e[2])
                            for e in newest],
                   'stack': t.stack[::-1]}
        elif rec == ord('E'):
            if b.u() != count or b.pos != len(data):
                raise TruthError('the end record does not close the file')
            return
        else:
            raise TruthError('unknown record %#x at offset %d' % (rec, b.pos - 1))
    raise TruthError('truncated: no end record after %d samples (the run was killed?)'
                     % count)


def _iter_v1(text):
    cur = None
    for line in text.splitlines():
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


def iter_truth(path):
    """The samples of a truth file, in order: dicts with nr, pid, tid, cpu,
    time, ip, br (the true branches as (from, to), newest first), kind
    (theirs) and stack (return addresses, innermost first).  Raises
    TruthError on a file that is cut short or not a truth file."""
    with open(path, 'rb') as f:
        data = f.read()
    if data.startswith(TRUTH_MAGIC):
        return _iter_v2(data)
    if data.startswith(b'# perf auxsample simulate ground truth v1'):
        return _iter_v1(data.decode())
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


def read_perf(perf, data, depth, args):
    cmd = [perf, 'script', '-i', data, '--itrace=L%d' % depth,
           '-F', 'ip,brstack'] + args
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    samples = []
    for line in out.splitlines():
        f = line.split()
        if not f:
            continue
        br = [tuple(int(x, 16) for x in e.split('/')[:2]) for e in f[1:]]
        samples.append({'ip': int(f[0], 16), 'br': without_trace_gaps(br)})
    return samples


def read_auxsample(perf, data, depth, args, gaps=False):
    """The branch stacks of perf auxsample script; with @gaps each entry
    says whether it is a gap, (from, to, is_gap)."""
    cmd = [perf, 'auxsample', 'script', '-i', data, '--depth', str(depth)] + args
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    samples = []
    for line in out.splitlines():
        f = line.split()
        if not f:
            continue
        if not line.startswith('\t'):
            # instructions:u, instructions when the kernel is traced,
            # or the tracepoint's samples
            ev = [x for x in f if x in ('instructions:u:', 'instructions:',
                                        'sched:sched_switch:')]
            ip = f[f.index(ev[0]) + 1] if ev else '0'
            samples.append({'ip': int(ip, 16), 'br': []})
        elif f[0] == 'branch':
            arrow = f.index('->')
            addr = [0 if x == '?' else int(x, 16) for x in (f[1], f[arrow + 1])]
            samples[-1]['br'].append(tuple(addr) + ((f[-1] == 'gap',) if gaps else ()))
    return samples


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




def compare_exact(truth, got, depth):
    if len(truth) != len(got) or not truth:
        print('%d samples in the truth, %d from perf' % (len(truth), len(got)))
        return 1
    full = [(t, p) for t, p in zip(truth, got) if len(t['br']) >= depth]
    equal = sum(1 for t, p in full if p['br'][:depth] == t['br'][:depth])
    print('%d of %d samples with their newest %d true branches' % (equal, len(full), depth))
    for i, (t, p) in enumerate(zip(truth, got)):
        if len(t['br']) >= depth and p['br'][:depth] != t['br'][:depth]:
            print('first: sample %d ip %#x' % (i, t['ip']))
            break
    return 0 if full and equal == len(full) else 1


def find_run(truth, run, pos, anchored):
    """Where @run is in @truth at or after @pos (at @pos if anchored)."""
    last = pos if anchored else len(truth) - len(run)
    for i in range(pos, last + 1):
        if truth[i:i + len(run)] == run:
            return i
    return -1


def compare_gaps(truth, got):
    if len(truth) != len(got) or not truth:
        print('%d samples in the truth, %d from perf' % (len(truth), len(got)))
        return 1
    compared = gaps = 0
    for i, (t, p) in enumerate(zip(truth, got)):
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
                print('sample %d ip %#x: branches %s are not the truth\'s %s' %
                      (i, t['ip'], ['%#x->%#x' % e for e in run[:4]],
                       'newest' if k == 0 else 'in order'))
                return 1
            pos = at + len(run)
            compared += len(run)
    print('%d samples, %d true branches between %d gaps' % (len(truth), compared, gaps))
    return 0 if compared and gaps else 1


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
    ours = exact = gaps = False
    while args[0] in ('--auxsample', '--exact', '--gaps'):
        ours |= args[0] in ('--auxsample', '--gaps')
        exact |= args[0] == '--exact'
        gaps |= args[0] == '--gaps'
        args = args[1:]
    data, depth, perf = args[0], int(args[1]), args[2]
    try:
        truth = read_truth(data + '.truth')
    except (TruthError, OSError) as e:
        print('%s.truth: %s' % (data, e))
        return 1
    if ours:
        got = read_auxsample(perf, data, depth, args[3:], gaps)
    else:
        got = read_perf(perf, data, depth * 2 if exact else depth, args[3:])
    if gaps:
        return compare_gaps(truth, got)
    if exact:
        return compare_exact(truth, got, depth)
    if len(truth) != len(got) or not truth:
        print('%d samples in the truth, %d from perf' % (len(truth), len(got)))
        return 1
    compared = short = 0
    for i, (t, p) in enumerate(zip(truth, got)):
        want = t['br'][:depth]
        if t['ip'] != p['ip']:
            print('sample %d: ip %#x, perf says %#x' % (i, t['ip'], p['ip']))
            return 1
        for j, e in enumerate(p['br']):
            if j >= len(want) or want[j] != e:
                print('sample %d ip %#x: entry %d is %#x -> %#x, truth %s' %
                      (i, t['ip'], j, e[0], e[1],
                       '%#x -> %#x' % want[j] if j < len(want) else 'has no more'))
                return 1
        compared += len(p['br'])
        short += len(p['br']) < len(want)
    print('%d samples, %d branches equal to the truth, %d samples with fewer'
          ' (perf shows trace begins and ends, or the sync point limits it)'
          % (len(truth), compared, short))
    return 0 if compared else 1


if __name__ == '__main__':
    sys.exit(main())
