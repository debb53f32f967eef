#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Virtual LBR decoding speed: libauxsample against perf's own decoder.

usage: bench/run.py [--runs N] [--out DIR]

Records two simulated Intel PT sample-mode files once (perf auxsample
simulate --mtc --cyc): 'sparse', one sample every 5000 instructions
(mostly disjoint snippets, the usual case), and 'dense', one every 200
(consecutive snippets overlap by most of their bytes).  Then, on the same
files, times

  ours      perf auxsample script --depth 64 > /dev/null
  upstream  perf script --itrace=L64 -F ip,brstack > /dev/null
  ours      perf report --stdio                  (virtual LBR, depth 64)
  upstream  perf report --stdio --itrace=L64

and prints medians of wall time, CPU time, ns per taken branch, samples per
second and peak RSS, with the ratio upstream/ours (above 1: ours is faster
or smaller).  Timings are this machine's: compare ratios, not seconds.
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
WORKLOAD = os.path.join(TOP, 'tools', 'perf', 'tests', 'shell', 'lib', 'auxsample_workload.c')


def run(cmd):
    """Wall seconds, CPU seconds and peak RSS (KiB) of one run of @cmd."""
    start = time.monotonic()
    with open(os.devnull, 'w') as null:
        proc = subprocess.Popen(cmd, stdout=null, stderr=null)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    if status:
        sys.exit('failed: %s' % ' '.join(cmd))
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def record(out, name, period):
    data = os.path.join(out, name + '.data')
    if not os.path.exists(data):
        subprocess.run([PERF, 'auxsample', 'simulate', '--mtc', '--cyc', '-c', str(period),
                        '-o', data, '--', os.path.join(out, 'workload'), 'branches', '400'],
                       check=True, capture_output=True)
    summary = subprocess.run([PERF, 'auxsample', 'script', '-i', data], check=True,
                             capture_output=True, text=True).stderr
    m = re.search(r'(\d+) AUX samples, (\d+) branches', summary)
    return data, int(m.group(1)), int(m.group(2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--out', default=os.path.join(TOP, 'build', 'bench'))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    wl = os.path.join(args.out, 'workload')
    if not os.path.exists(wl):
        subprocess.run(['cc', '-O1', '-static', '-o', wl, WORKLOAD, '-lpthread'], check=True)

    print('| file | samples | branches | tool | wall s | CPU s | ns/branch | samples/s | peak RSS MiB | upstream/ours (CPU) |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for name, period in (('sparse', 5000), ('dense', 200)):
        data, samples, branches = record(args.out, name, period)
        pairs = (
            ('script', [PERF, 'auxsample', 'script', '--depth', '64', '-i', data],
             [PERF, 'script', '--itrace=L64', '-F', 'ip,brstack', '-i', data]),
            ('report', [PERF, 'report', '--stdio', '-i', data],
             [PERF, 'report', '--stdio', '--itrace=L64', '-i', data]),
        )
        for what, ours, upstream in pairs:
            res = {}
            for who, cmd in (('ours', ours), ('upstream', upstream)):
                runs = [run(cmd) for _ in range(args.runs)]
                res[who] = [statistics.median(x) for x in zip(*runs)]
            for who in ('ours', 'upstream'):
                wall, cpu, rss = res[who]
                ratio = '%.2f' % (res['upstream'][1] / res['ours'][1]) if who == 'ours' else ''
                print('| %s | %d | %d | %s %s | %.3f | %.3f | %.0f | %.0f | %.1f | %s |' %
                      (name, samples, branches, who, what, wall, cpu, 1e9 * cpu / branches,
                       samples / wall, rss / 1024, ratio))


if __name__ == '__main__':
    main()
