# SPDX-License-Identifier: GPL-2.0
"""Compare the virtual LBR of simulated AUX samples with the ground truth.

usage: auxsample_truth.py [--auxsample] [--exact] <perf.data> <depth> <perf> [args...]

Without --auxsample the branch stacks come from perf's own decoder
('perf script --itrace=L<depth> -F ip,brstack'); with it from
'perf auxsample script --depth <depth>' (libauxsample), which must match
exactly: it shows no trace begins or ends.

With --exact every sample whose truth has <depth> branches must show them
all, the newest <depth> true branches and no fewer (perf's decoder is run
with twice the depth, so that the trace begins and ends it shows still
leave <depth> branches): what a timed decoder gets wrong when it cannot
tell which branches came before the sample.

Reads <perf.data>.truth (perf auxsample simulate) and the branch stacks
that 'perf script --itrace=L<depth> -F ip,brstack' gives, and checks, sample
by sample, that perf's entries are the newest true branches, in order: it
may give fewer (the snippet's first sync point limits it), never a wrong
one.  perf also shows where the trace stopped and started again: a syscall
is (syscall ip -> 0) as in the truth, then a trace begin (0 -> return
address); an earlier sample's PMI is a trace end and begin at the same IP,
(ip -> 0) then (0 -> ip), which is no branch at all.  Trace begins, and
trace ends at the IP of the trace begin that follows them, are left out.
"""
import subprocess
import sys


def read_truth(path):
    samples, cur = [], None
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith('#'):
                continue
            if w[0] == 'sample':
                cur = {'ip': int(w[w.index('ip') + 1], 16), 'br': []}
            elif w[0] == 'branch':
                cur['br'].append((int(w[1], 16), int(w[2], 16)))
            elif w[0] == 'end':
                samples.append(cur)
    return samples


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


def read_auxsample(perf, data, depth, args):
    cmd = [perf, 'auxsample', 'script', '-i', data, '--depth', str(depth)] + args
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    samples = []
    for line in out.splitlines():
        f = line.split()
        if not f:
            continue
        if not line.startswith('\t'):
            ip = f[f.index('instructions:u:') + 1] if 'instructions:u:' in f else '0'
            samples.append({'ip': int(ip, 16), 'br': []})
        elif f[0] == 'branch':
            arrow = f.index('->')
            addr = [0 if x == '?' else int(x, 16) for x in (f[1], f[arrow + 1])]
            samples[-1]['br'].append(tuple(addr))
    return samples


def without_trace_gaps(br):
    """Newest first: drop (0 -> b), and (b -> 0) right after it."""
    out, begin = [], None
    for e in br:
        if e[0] == 0:
            begin = e[1]
            continue
        if not (e[1] == 0 and e[0] == begin):
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


def main():
    args = sys.argv[1:]
    ours = exact = False
    while args[0] in ('--auxsample', '--exact'):
        ours |= args[0] == '--auxsample'
        exact |= args[0] == '--exact'
        args = args[1:]
    data, depth, perf = args[0], int(args[1]), args[2]
    truth = read_truth(data + '.truth')
    if ours:
        got = read_auxsample(perf, data, depth, args[3:])
    else:
        got = read_perf(perf, data, depth * 2 if exact else depth, args[3:])
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
