#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Virtual LBR decoding speed: libauxsample against perf's own decoder.

usage: bench/run.py [--runs N] [--out DIR] [--samples N] [--threads LIST]
                    [--perf PATH] [--engine E]
                    [--files sparse,medium,dense,mix,procs]
                    [--decoder libipt,walker] [--no-cyc]

Records simulated Intel PT sample-mode files once (perf auxsample
simulate --mtc --cyc, with its default engine: Valgrind where installed)
of the tests' workload ('branches N', about 133 instructions an
iteration), each with about --samples samples (default 12000) and again
with half as many: 'sparse', one sample every 40000 instructions
(disjoint 4 KiB snippets, which hold about 26000 instructions of this
trace: the usual case at default sample rates), 'medium', one every 5000
(consecutive snippets overlap by about 80%), 'dense', one every 200 (by
99%), and 'mix', two processes of the workload side by side (each on a
CPU of its own), one sample every 5000.  'procs' (only when --files
names it) is many short processes, one after the other: a shell running
/bin/true (dynamically linked: ld.so, libc) once every 150 samples, one
sample every 1000 instructions (perf record's default period for
instructions is higher; this is the simulator's).  Then, on the same
files, times

  ours      perf auxsample script --depth 64 -j T > /dev/null
  ours      perf auxsample script --depth 64 -F ip,brstack -j T > /dev/null
            (upstream's fields, as perf script prints them)
  upstream  perf script --itrace=L64 -F ip,brstack > /dev/null
  upstream  perf script --itrace=L64 -F ip,brstacksym > /dev/null
            (what ours prints: each address with its symbol; no ratio)
  ours      perf auxsample report --depth 64 -j T   (hot paths)
  upstream  perf report --stdio --itrace=L64
  ours      perf report --stdio                  (virtual LBR, depth 64)
  upstream  perf report --stdio --itrace=L64

for each T of --threads (default 1,2; 1 decodes inline, without threads;
0 passes no -j, for builds without it), and prints medians of wall time,
CPU time, ns per taken branch (CPU), samples per second (wall) and peak
RSS, with the ratios upstream/ours of wall and of CPU time (above 1: ours
is faster).  The per-sample cost apart from start-up (loading perf, the
dynamic linker, the session) is the slope between the two sizes: the
difference of CPU time over the difference of samples, in microseconds.  The runs of the commands compared take turns, so that other
work on the machine weighs on all of them alike.  --perf times another
build (the same perf is upstream's).  --decoder times ours with each
Intel PT decoder of the list, side by side (--decoder= for perf
auxsample, the config variable auxsample.decoder through PERF_CONFIG for
perf report); without it, ours runs with its default and perf's config.
--no-cyc records (and times) files without CYC, named *-nocyc-*.
Then decoding alone, each Intel PT decoder on the larger file of each
kind: what perf auxsample script -v -j 1 --depth 64 says the decoder's
calls walked and took (medians of --runs), without reading the file,
symbols or printing.  Timings are this machine's:
compare ratios, not seconds.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERF = os.path.join(TOP, 'build', 'perf', 'perf')


def jobs(t):
    """perf auxsample's -j option for @t threads; 0: the default."""
    return ['-j', str(t)] if t else []
WORKLOAD = os.path.join(TOP, 'tools', 'perf', 'tests', 'shell', 'lib', 'auxsample_workload.c')


def run(cmd, env=None):
    """Wall seconds, CPU seconds and peak RSS (KiB) of one run of @cmd."""
    start = time.monotonic()
    with open(os.devnull, 'w') as null:
        proc = subprocess.Popen(cmd, stdout=null, stderr=null, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    if status:
        sys.exit('failed: %s' % ' '.join(cmd))
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


INSNS_PER_ITERATION = 133
PERIODS = {'sparse': 40000, 'medium': 5000, 'dense': 200, 'mix': 5000, 'procs': 1000}
# Samples of a /bin/true under the Valgrind engine, at 'procs''s period
SAMPLES_PER_TRUE = 150


def command(out, name, iterations):
    """The program run for @name's file of @iterations."""
    if name == 'procs':
        return ['/bin/sh', '-c',
                'i=0; while [ $i -lt %d ]; do /bin/true; i=$((i + 1)); done' % iterations]
    wl = '%s branches %d' % (os.path.join(out, 'workload'), iterations)
    return ['/bin/sh', '-c', '%s & %s; wait' % (wl, wl)] if name == 'mix' else wl.split()


def record(out, name, samples, engine, cyc=True):
    """The file @name with about @samples samples, recorded once."""
    period = PERIODS[name]
    procs = 2 if name == 'mix' else 1
    iterations = max(1, samples * period // INSNS_PER_ITERATION // procs)
    if name == 'procs':
        iterations = max(1, samples // SAMPLES_PER_TRUE)
    data = os.path.join(out, '%s%s-%d-c%d.data' % (name, '' if cyc else '-nocyc',
                                                   iterations, period))
    if not os.path.exists(data):
        cmd = command(out, name, iterations)
        subprocess.run([PERF, 'auxsample', 'simulate', '--mtc'] + (['--cyc'] if cyc else []) +
                       ['-c', str(period),
                        '-o', data] + (['--engine', engine] if engine else []) + ['--'] + cmd,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Only the summary on stderr: the output held here would be in every
    # later child's peak RSS (Linux keeps the forking process's at exec).
    summary = subprocess.run([PERF, 'auxsample', 'script', '-i', data], check=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True).stderr
    m = re.search(r'(\d+) AUX samples, (\d+) branches', summary)
    return data, int(m.group(1)), int(m.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--out', default=os.path.join(TOP, 'build', 'bench'))
    ap.add_argument('--samples', type=int, default=12000)
    ap.add_argument('--engine', default='')
    ap.add_argument('--threads', default='1,2')
    ap.add_argument('--perf', default=PERF)
    ap.add_argument('--files', default='sparse,medium,dense,mix')
    ap.add_argument('--no-cyc', dest='cyc', action='store_false',
                    help='record without CYC packets (files named *-nocyc-*)')
    ap.add_argument('--decoder', default='',
                    help='Intel PT decoders of ours to time: libipt, walker or both')
    args = ap.parse_args()
    args.decoders = [d for d in args.decoder.split(',') if d]
    for d in args.decoders:
        if d not in ('libipt', 'walker'):
            sys.exit('--decoder: %s is no decoder (libipt, walker)' % d)
    perf = args.perf
    threads = [int(t) for t in args.threads.split(',')]
    # Other work on the machine takes CPUs from the threads: say how much.
    print('load average at start: %.2f %.2f %.2f, %d CPUs' % (os.getloadavg() + (os.cpu_count(),)))
    os.makedirs(args.out, exist_ok=True)
    # perf report has no --decoder: a config file of its own per decoder.
    args.config = {}
    for d in args.decoders:
        args.config[d] = os.path.join(args.out, 'perfconfig-%s' % d)
        with open(args.config[d], 'w') as f:
            f.write('[auxsample]\n\tdecoder = %s\n' % d)
    wl = os.path.join(args.out, 'workload')
    if not os.path.exists(wl):
        subprocess.run(['cc', '-O1', '-static', '-o', wl, WORKLOAD, '-lpthread'], check=True)

    print('| file | samples | branches | tool | wall s | CPU s | ns/branch | samples/s | '
          'peak RSS MiB | upstream/ours wall | upstream/ours CPU | us/sample (slope) |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|')
    big = []
    for name in args.files.split(','):
        small = record(args.out, name, args.samples // 2, args.engine, args.cyc)
        bench(args, perf, threads, name, small, None)
        big.append((name, record(args.out, name, args.samples, args.engine, args.cyc)))
        bench(args, perf, threads, name, big[-1][1], small)
    print()
    print('| file | decoder | taken branches walked a sample | us a sample | ns a branch | '
          'libipt/walker |')
    print('|---|---|---|---|---|---|')
    for name, (data, _, _) in big:
        decode_alone(args, perf, name, data)
    print('load average at end: %.2f %.2f %.2f' % os.getloadavg())


COST = re.compile(r'decoding: (\d+) taken branches walked \(([\d.]+) a sample\) '
                  r'in [\d.]+ s: ([\d.]+) us a sample, ([\d.]+) ns a branch')


def decode_alone(args, perf, name, data):
    """The decoders' own cost on @data, as perf auxsample script -v says it."""
    res = {}
    for _ in range(args.runs):
        for d in ('walker', 'libipt'):
            out = subprocess.run([perf, 'auxsample', 'script', '-v', '-j', '1', '--depth', '64',
                                  '--decoder=%s' % d, '-i', data], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True).stderr
            m = COST.search(out)
            if m:
                res.setdefault(d, []).append((float(m.group(2)), float(m.group(3)),
                                              float(m.group(4))))
    for d in ('walker', 'libipt'):
        if d not in res:
            print('| %s | %s | no decode cost in -v | | | |' % (name, d))
            continue
        per_sample, us, ns = (statistics.median(x) for x in zip(*res[d]))
        ratio = ''
        if d == 'walker' and 'libipt' in res:
            ratio = '%.2f' % (statistics.median(r[1] for r in res['libipt']) / us)
        print('| %s | %s | %.1f | %.2f | %.2f | %s |' % (name, d, per_sample, us, ns, ratio))


def bench(args, perf, threads, name, recorded, small):
    """Time the tools on @recorded; after @small (the half-size file,
    timed first), the slope between the two."""
    data, samples, branches = recorded
    upstream_script = [PERF, 'script', '--itrace=L64', '-F', 'ip,brstack', '-i', data]
    # what ours prints: each address with its symbol and offset
    upstream_script_sym = [PERF, 'script', '--itrace=L64', '-F', 'ip,brstacksym', '-i', data]
    upstream_report = [PERF, 'report', '--stdio', '--itrace=L64', '-i', data]
    # (label suffix, --decoder option, environment) of each decoder of ours
    decoders = [('', [], None)]
    if args.decoders:
        decoders = [(' [%s]' % d, ['--decoder=%s' % d],
                     dict(os.environ, PERF_CONFIG=args.config[d])) for d in args.decoders]
    script, report, perf_report = [], [], []
    for sfx, opt, env in decoders:
        script += [('auxsample script -j%d%s' % (t, sfx),
                    [perf, 'auxsample', 'script', '--depth', '64'] + opt + jobs(t) +
                    ['-i', data], None) for t in threads]
        # upstream's fields, as perf script prints an injected file's
        script += [('auxsample script -F ip,brstack -j%d%s' % (t, sfx),
                    [perf, 'auxsample', 'script', '--depth', '64', '-F', 'ip,brstack'] + opt +
                    jobs(t) + ['-i', data], None) for t in threads]
        report += [('auxsample report -j%d%s' % (t, sfx),
                    [perf, 'auxsample', 'report', '--depth', '64'] + opt + jobs(t) +
                    ['-i', data], None) for t in threads]
        perf_report.append(('perf report' + sfx, [perf, 'report', '--stdio', '-i', data], env))
    # (what, upstream's commands, the first the ratios' reference; ours)
    groups = (
        ('script', [('upstream script', upstream_script, None),
                    ('upstream script, symbols', upstream_script_sym, None)], script),
        ('report', [('upstream report', upstream_report, None)], report + perf_report),
    )
    for what, upstreams, ours in groups:
        cmds = upstreams + ours
        runs = {who: [] for who, _, _ in cmds}
        for _ in range(args.runs):
            for who, cmd, env in cmds:
                runs[who].append(run(cmd, env))
        res = {who: [statistics.median(x) for x in zip(*r)] for who, r in runs.items()}
        up = res[upstreams[0][0]]
        for who, _, _ in ours + upstreams:
            wall, cpu, rss = res[who]
            is_up = who.startswith('upstream')
            label = who if is_up else 'ours ' + who
            ratios = ('%.2f | %.2f' % (up[0] / wall, up[1] / cpu) if not is_up else ' | ')
            slope = ''
            key = (name, label)
            if small is None:
                SMALL[key] = (samples, cpu)
            elif key in SMALL and samples > SMALL[key][0]:
                slope = '%.1f' % (1e6 * (cpu - SMALL[key][1]) / (samples - SMALL[key][0]))
            print('| %s | %d | %d | %s | %.3f | %.3f | %.0f | %.0f | %.1f | %s | %s |' %
                  (name, samples, branches, label, wall, cpu, 1e9 * cpu / branches,
                   samples / wall, rss / 1024, ratios, slope))


SMALL = {}


if __name__ == '__main__':
    main()
