# SPDX-License-Identifier: GPL-2.0
"""Check the cycles of virtual LBR entries against the instructions run.

usage: auxsample_cycles.py <binary> <perf script -F ip,brstack output> <max error %>

Between two consecutive taken branches of a branch stack the program ran
straight through, from the older branch's target to the newer branch: as
many instructions as objdump lists between them.  The simulator's clock
gives every instruction the same number of cycles, so each entry's cycles
(the sixth field of perf script's brstack) should be that many times its
instructions.  Checks that nearly every entry has cycles (not 0,
unknown), and that they are within <max error %> of the instruction
count times the file's cycles per instruction, weighted by cycles.
"""
import subprocess
import sys


def instructions(binary):
    out = subprocess.run(['objdump', '-d', '--no-show-raw-insn', binary], check=True,
                         capture_output=True, text=True).stdout
    addrs = []
    for line in out.splitlines():
        head = line.split(':', 1)[0].strip()
        if line.startswith(' ') and ':' in line and head and \
                all(c in '0123456789abcdef' for c in head):
            addrs.append(int(head, 16))
    return {a: i for i, a in enumerate(sorted(addrs))}


def main():
    binary, script, max_error = sys.argv[1], sys.argv[2], float(sys.argv[3])
    index = instructions(binary)
    pairs, unknown = [], 0
    for line in open(script):
        entries = [e.split('/') for e in line.split()[1:]]
        for new, old in zip(entries, entries[1:]):
            frm, old_to, cycles = int(new[0], 16), int(old[1], 16), int(new[5])
            if frm not in index or old_to not in index or index[frm] < index[old_to]:
                continue
            if not cycles:
                unknown += 1
                continue
            pairs.append((index[frm] - index[old_to] + 1, cycles))
    assert pairs, 'no entry with cycles'
    total = len(pairs) + unknown
    assert unknown <= total // 20, '%d of %d entries without cycles' % (unknown, total)
    per_insn = sum(c for _, c in pairs) / sum(n for n, _ in pairs)
    error = sum(abs(c - n * per_insn) for n, c in pairs) / sum(c for _, c in pairs)
    print('%d entries with cycles, %d without; %.2f cycles per instruction; %.1f%% off, weighted'
          % (len(pairs), unknown, per_insn, 100 * error))
    assert 100 * error <= max_error, 'cycles %.1f%% off the instructions run' % (100 * error)


if __name__ == '__main__':
    main()
