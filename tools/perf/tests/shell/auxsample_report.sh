#!/bin/bash
# perf auxsample report hot paths
# SPDX-License-Identifier: GPL-2.0
#
# perf auxsample report on simulated Intel PT sample-mode recordings of
# small programs whose loops and calls are known: the inner and outer
# loops of the workload's nest() show up with the trip counts its source
# implies, edges, blocks and calls add up to what perf auxsample script
# --json shows of the same file, filters and limits cut what they
# should, --json parses, bad input gets a clear error, and decoding
# threads (-j) change no output byte.  A stripped PIE build is reported
# by offsets in the file, with its recursion not taken for a loop.

set -u

# shellcheck source=lib/auxsample_sim.sh
. "$(dirname "$0")"/lib/auxsample_sim.sh
auxsample_sim_check
err=0
lib=$(dirname "$0")/lib
tmp=$(mktemp -d /tmp/__perf_test.auxsample_report.XXXXX)
out=$tmp/out
depth=128
nests=60
auxsample_test_traps

auxsample_sim_workload "$tmp/wl" "$out"

# simulate FILE SIMULATE-OPTIONS -- COMMAND
simulate() {
	local data=$1

	shift
	perf auxsample simulate -o "$data" "$@" > "$out" 2>&1 || fail "simulate $*"
}

# report NAME OPTIONS: perf auxsample report's output in $tmp/NAME.
report() {
	local name=$1

	shift
	perf auxsample report "$@" > "$tmp/$name" 2> "$out" || fail "report $*"
}

simulate "$tmp/loops.data" --no-tsc -c 700 -- "$tmp/wl" loops $nests
simulate "$tmp/branches.data" --no-tsc -c 700 -- "$tmp/wl" branches 20
# 256-byte snippets: most hold no PSB, so they cannot be decoded.
simulate "$tmp/short.data" --no-tsc -c 700 --aux-sample-size 256 -- "$tmp/wl" loops 20

for f in loops branches short; do
	perf auxsample script -i "$tmp/$f.data" --depth $depth --json \
		> "$tmp/$f.script" 2> "$out" || fail "script $f"
	report "$f.json" -i "$tmp/$f.data" --depth $depth -n 0 --json
done

# Everything against perf auxsample script --json of the same files.
python3 - "$tmp" "$lib/auxsample_workload.c" $nests > "$out" 2>&1 <<'PY' || fail "report --json"
import collections, json, re, sys

tmp, source, nests = sys.argv[1], open(sys.argv[2]).read(), int(sys.argv[3])
inner = int(re.search(r'#define LOOP_INNER\s+(\d+)', source).group(1))
outer = int(re.search(r'#define LOOP_OUTER\s+(\d+)', source).group(1))

def load(name):
    rep = json.load(open('%s/%s.json' % (tmp, name)))
    samples = [json.loads(l) for l in open('%s/%s.script' % (tmp, name))]
    return rep, samples

def func(sym):
    return sym.split('+')[0] if sym else None

def expect(rep, samples):
    """Edges, blocks, call branches and totals computed from script --json."""
    edges, blocks, calls = collections.Counter(), collections.Counter(), collections.Counter()
    for s in samples:
        brs = s['branches'][::-1]		# oldest first
        for b in brs:
            if b['kind'] != 'gap':
                edges[(b['from'], b['to'], b['kind'])] += 1
            if b['kind'] in ('call', 'ind_call') and b['to']:
                calls[(func(b['from_sym']), func(b['to_sym']))] += 1
        for p, c in zip(brs, brs[1:]):
            if 'gap' in (p['kind'], c['kind']) or not p['to']:
                continue
            start, end = int(p['to'], 16), int(c['from'], 16)
            if start <= end < start + 4096:
                blocks[(p['to'], c['from'])] += 1
    return edges, blocks, calls

def check_counts(name):
    rep, samples = load(name)
    edges, blocks, calls = expect(rep, samples)
    failed = sum(1 for s in samples if not s['sync'])
    assert rep['samples'] == len(samples), (rep['samples'], len(samples))
    assert rep['failed'] == failed and rep['decoded'] == len(samples) - failed, rep
    assert rep['branches'] == sum(edges.values()), (rep['branches'], sum(edges.values()))
    got = {(e['from'], e['to'], e['kind']): e['count'] for e in rep['edges']}
    assert got == dict(edges), 'edges differ from script --json'
    counts = [e['count'] for e in rep['edges']]
    assert counts == sorted(counts, reverse=True), 'edges not sorted by count'
    top = edges.most_common(1)[0]
    assert rep['edges'][0]['count'] == top[1], (rep['edges'][0], top)
    got = {(b['start'], b['end']): b['count'] for b in rep['blocks']}
    assert got == dict(blocks), 'blocks differ from script --json'
    got = {(c['caller_sym'], c['callee_sym']): c['calls'] for c in rep['calls'] if c['calls']}
    assert got == dict(calls), 'call counts differ from script --json'
    print('%s: %d samples, %d failed, %d branches, %d edges, %d blocks, %d calls as script says'
          % (name, len(samples), failed, rep['branches'], len(edges), len(blocks),
             sum(calls.values())))
    return rep

rep = check_counts('loops')
nest = [l for l in rep['loops'] if l['head_sym'].startswith('nest+')]
assert len(nest) == 2, nest
# The inner loop lies within the outer one.
inner_loop, outer_loop = sorted(nest, key=lambda l: int(l['tail'], 16) - int(l['head'], 16))
for loop, n in (inner_loop, inner), (outer_loop, outer):
    # do-while: a run of n iterations takes the back edge n - 1 times.
    assert loop['runs'] > 0, loop
    assert loop['trips_avg'] == n - 1 and loop['trips_max'] == n - 1, (loop, n)
    assert loop['partial_max'] <= n - 1, loop
    print('nest loop %s .. %s: %d runs of %d trips, as LOOP %d implies'
          % (loop['head_sym'], loop['tail_sym'], loop['runs'], loop['trips_max'], n))
# loops() calls nest() from its loop: runs longer than the LBR, in part.
outermost = [l for l in rep['loops'] if l['head_sym'].startswith('loops+')]
assert outermost and outermost[0]['partial_max'] <= nests - 1, outermost
body = [b for b in rep['blocks'] if (b['start'], b['end']) ==
        (inner_loop['head'], inner_loop['tail'])]
size = int(inner_loop['tail'], 16) - int(inner_loop['head'], 16)
assert body and body[0]['insns'] >= 3 and size + 2 <= body[0]['bytes'] <= size + 6, body
pairs = {(c['caller_sym'], c['callee_sym']): c for c in rep['calls']}
assert pairs[('loops', 'nest')]['calls'] > 0, pairs.get(('loops', 'nest'))
assert pairs[('loops', 'nest')]['samples'] > 0, pairs.get(('loops', 'nest'))
assert pairs[('main', 'loops')]['samples'] > 0, pairs.get(('main', 'loops'))

rep = check_counts('branches')
pairs = {(c['caller_sym'], c['callee_sym']): c['calls'] for c in rep['calls']}
for pair in ('branches', 'fib'), ('fib', 'fib'), ('branches', 'pick'), \
            ('branches', 'odd'), ('branches', 'even'):
    assert pairs.get(pair, 0) > 0, ('no call', pair)
kinds = {(e['from_sym'].split('+')[0], e['kind']) for e in rep['edges'] if e['from_sym']}
assert ('branches', 'ind_call') in kinds and ('pick', 'ind_jump') in kinds, kinds
print('branches: calls branches->fib %d, fib->fib %d, branches->odd %d'
      % (pairs[('branches', 'fib')], pairs[('fib', 'fib')], pairs[('branches', 'odd')]))

rep = check_counts('short')
assert rep['failed'] > 0 and rep['decoded'] > 0, rep
PY
cat "$out"

# Filters and limits, against the unfiltered report.
data=$tmp/loops.data
report symbols.json -i "$data" --depth $depth -n 0 --json -S nest
report dsos.json -i "$data" --depth $depth -n 0 --json -d wl
report nodso.json -i "$data" --depth $depth -n 0 --json -d no-such.so
report comm.json -i "$data" --depth $depth -n 0 --json -c wl
report nocomm.json -i "$data" --depth $depth -n 0 --json --comm no-such-command
report limit.json -i "$data" --depth $depth -n 0 --json --percent-limit 5
report three.json -i "$data" --depth $depth -n 3 --json
report show.json -i "$data" --depth $depth --json --show loops,calls
python3 - "$tmp" > "$out" 2>&1 <<'PY' || fail "filters"
import json, sys

tmp = sys.argv[1]
def load(name):
    return json.load(open('%s/%s.json' % (tmp, name)))

full = load('loops')
sym = load('symbols')
def in_nest(item, a, b):
    return any((item[k] or '').startswith('nest+') for k in (a + '_sym', b + '_sym'))
assert sym['edges'] and all(in_nest(e, 'from', 'to') for e in sym['edges']), sym['edges']
assert len(sym['edges']) == sum(in_nest(e, 'from', 'to') for e in full['edges'])
assert len(sym['edges']) < len(full['edges'])
assert all(in_nest(b, 'start', 'end') for b in sym['blocks'])
assert len(sym['loops']) == 2 and sym['branches'] == full['branches']
print('--symbols nest: %d of %d edges' % (len(sym['edges']), len(full['edges'])))

assert load('dsos')['edges'] == full['edges'], '--dsos wl dropped edges of a static wl'
nodso = load('nodso')
assert not any(nodso[s] for s in ('edges', 'loops', 'blocks', 'calls')), nodso
assert load('comm')['edges'] == full['edges'], '--comms wl dropped edges'
nocomm = load('nocomm')
assert nocomm['filtered'] == full['samples'] and nocomm['decoded'] == 0, nocomm
assert not any(nocomm[s] for s in ('edges', 'loops', 'blocks', 'calls')), nocomm

limit = load('limit')
assert limit['edges'] and all(e['percent'] >= 5 for e in limit['edges'])
assert len(limit['edges']) == sum(e['percent'] >= 5 for e in full['edges'])
assert all(l['percent'] >= 5 for l in limit['loops'])
print('--percent-limit 5: %d edges' % len(limit['edges']))

three = load('three')
for s in 'edges', 'loops', 'blocks', 'calls':
    assert three[s] == full[s][:3], s
show = load('show')
assert 'loops' in show and 'calls' in show and 'edges' not in show and 'blocks' not in show
PY
cat "$out"

# The text report: a header with the counts, every section, the nest loops.
report text -i "$data" --depth $depth
samples=$(auxsample_sim_samples "$data.truth")
header="# perf auxsample report: $samples AUX samples, $samples decoded, 0 failed (no sync point)"
header="$header, 0 with decode errors, [0-9]* branches (depth $depth)"
grep -q "^$header\$" "$tmp/text" || { cp "$tmp/text" "$out"; fail "text: no header line"; }
for section in '# Branch edges:' '# Loops:' '# Hot basic blocks:' '# Calls:'; do
	grep -q "^$section" "$tmp/text" || { cp "$tmp/text" "$out"; fail "text: no $section"; }
done
grep -Eq ' 11\.00 +11  wl +nest\+0x[0-9a-f]+ \.\. nest\+0x[0-9a-f]+$' "$tmp/text" ||
	{ cp "$tmp/text" "$out"; fail "text: no inner nest loop of 11 trips"; }
report short.text -i "$tmp/short.data"
failed=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["failed"])' \
	"$tmp/short.json")
grep -q "AUX samples, [0-9]* decoded, $failed failed (no sync point)" "$tmp/short.text" ||
	{ cp "$tmp/short.text" "$out"; fail "text: not $failed failed samples"; }

# Stripped PIE code, against nm of the same build unstripped: addresses as
# offsets in the file, the dso named, the calls of fib() to itself by call
# site (no function is known) and in the call chains of samples too, and
# its recursion not taken for a loop.
if cc -O1 -fpie -pie -o "$tmp/pie" "$lib/auxsample_workload.c" -lpthread > "$out" 2>&1; then
	nm -S "$tmp/pie" > "$tmp/pie.nm"
	strip -o "$tmp/wlpie" "$tmp/pie"
	simulate "$tmp/pie.data" --no-tsc -c 250 -- "$tmp/wlpie" branches 20
	report pie.json -i "$tmp/pie.data" --depth $depth -n 0 --json -d wlpie
	report pie.text -i "$tmp/pie.data" --depth $depth -n 0 -d wlpie
	python3 - "$tmp" > "$out" 2>&1 <<'PY' || fail "stripped PIE"
import json, re, sys

tmp = sys.argv[1]
syms = {}
for line in open(tmp + '/pie.nm'):
    f = line.split()
    if len(f) == 4:
        syms[f[3]] = (int(f[0], 16), int(f[1], 16))
fib, fib_size = syms['fib']
rep = json.load(open(tmp + '/pie.json'))
text = open(tmp + '/pie.text').read()

def off(item, key):
    return int(item[key + '_off'], 16)

edges = [e for e in rep['edges'] if (e['from_dso'] or '').endswith('/wlpie')]
assert edges, 'no edges in wlpie'
for e in edges:
    assert e['from_sym'] is None, e
    row = r'  wlpie +%#x  ' % off(e, 'from')
    assert re.search(row, text), ('text report does not show the offset', row)
rec = [c for c in rep['calls'] if (c['caller_dso'] or '').endswith('/wlpie') and
       fib <= off(c, 'caller') < fib + fib_size and off(c, 'callee') == fib]
assert len(rec) == 2, ('not two call sites of fib calling fib', rec)
# Samples whose call chains hold a call of fib() by fib(): matched by call site.
assert all(c['calls'] > 0 for c in rec) and sum(c['samples'] for c in rec) > 0, rec
for c in rec:
    assert '[%#x]' % off(c, 'caller') in text, ('no call site', c)
loops = [l for l in rep['loops'] if fib <= off(l, 'head') < fib + fib_size]
assert not loops, ('recursion taken for a loop', loops)
print('stripped PIE: %d edges by offset, fib() calls itself from %s, no loop in it'
      % (len(edges), ', '.join(hex(off(c, 'caller')) for c in rec)))
PY
	cat "$out"

	# script --json gives each sample's time, symbol and dso as perf script
	# does, and its call chain with symbols and dsos.
	perf script -F time,ip,sym,symoff,dso --no-itrace -i "$tmp/pie.data" \
		> "$tmp/pie.perf-script" 2> "$out" || fail "perf script"
	perf auxsample script -i "$tmp/pie.data" --json > "$tmp/pie.script" 2> "$out" ||
		fail "script --json"
	python3 - "$tmp" > "$out" 2>&1 <<'PY' || fail "script --json against perf script"
import json, re, sys

tmp = sys.argv[1]
ref = []
for line in open(tmp + '/pie.perf-script'):
    m = re.match(r'\s*([0-9]+\.[0-9]+):\s+([0-9a-f]+) (.+) \((.+)\)$', line)
    if m:
        ref.append(m.groups())
got = [json.loads(line) for line in open(tmp + '/pie.script')]
assert ref and len(ref) == len(got), (len(ref), len(got))
chain = 0
for (time, ip, sym, dso), g in zip(ref, got):
    assert g['time'] == time and int(g['ip'], 16) == int(ip, 16), (g, time, ip)
    # perf script says [unknown] where we say null: a sample at the syscall
    # entry (a period ending on a syscall) has no map in a user-only file.
    assert ((g['sym'] or '[unknown]') == sym and
            (g['dso'] or '[unknown]') == dso), (g['sym'], g['dso'], sym, dso)
    for c in g['callchain']:
        assert c['dso'] and (c['sym'] is None or '+0x' in c['sym']), c
        chain += 1
print('script --json: %d samples at perf script\'s times, symbols and dsos; %d callers'
      % (len(got), chain))
PY
	cat "$out"
else
	echo "no PIE build of the workload: not checked"
fi

# Decoding threads: -j1 decodes inline; -j2 and -j4 through the pool, in
# windows of 256 samples (dense.data has more), with barriers at the
# mmaps of a dynamically linked program and at the second thread's fork:
# every output byte for byte the same.
simulate "$tmp/dense.data" --no-tsc -c 100 -- "$tmp/wl" branches 10
simulate "$tmp/threads.data" --no-tsc -c 700 -- "$tmp/wl" threads 20
simulate "$tmp/dynamic.data" --no-tsc -c 3000 -- /bin/true
# outputs NAME J: script, script --json, stat and report (text, --json) with -j J.
outputs() {
	local data=$tmp/$1.data o=$tmp/$1.j$2

	perf auxsample script -i "$data" -j $2 > "$o.script" 2>&1 || fail "$1: script -j $2"
	perf auxsample script -i "$data" -j $2 --json > "$o.json" 2>&1 ||
		fail "$1: script --json -j $2"
	perf auxsample stat -i "$data" -j $2 > "$o.stat" 2>&1 || fail "$1: stat -j $2"
	perf auxsample report -i "$data" -j $2 -n 0 > "$o.report" 2>&1 ||
		fail "$1: report -j $2"
	perf auxsample report -i "$data" -j $2 -n 0 --json > "$o.rjson" 2>&1 ||
		fail "$1: report --json -j $2"
}
for f in loops branches short dense threads dynamic; do
	alike=1
	outputs $f 1
	for j in 2 4; do
		outputs $f $j
		for o in script json stat report rjson; do
			cmp -s "$tmp/$f.j1.$o" "$tmp/$f.j$j.$o" && continue
			diff "$tmp/$f.j1.$o" "$tmp/$f.j$j.$o" > "$out"
			fail "$f: $o -j $j differs from -j 1"
			alike=0
		done
	done
	[ $alike = 1 ] && echo "$f: -j 1, 2, 4 alike: $(grep -c '^{' "$tmp/$f.j1.json") samples"
done

# Errors: a clear message and a non-zero exit.
# expect_error WHAT MESSAGE REPORT-OPTIONS
expect_error() {
	local what=$1 message=$2 rc

	shift 2
	timeout -k 10 120 perf auxsample report "$@" > "$out" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		fail "$what: exit 0"
	elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		fail "$what: still running after 120 s"
	elif killed $rc; then
		fail "$what: killed by signal $((rc - 128))"
	elif ! grep -q "$message" "$out"; then
		fail "$what: no '$message'"
	fi
}
expect_error "missing file" "failed to open $tmp/no-such.data" -i "$tmp/no-such.data"
perf record -o "$tmp/plain.data" -e cpu-clock -- true > /dev/null 2>&1
expect_error "no AUX samples" \
	"has no samples with AUX area data; record them with perf record -A" -i "$tmp/plain.data"
head -c $(($(stat -c %s "$data") / 2)) "$data" > "$tmp/cut.data"
expect_error "truncated file" "cut.data is truncated" -i "$tmp/cut.data"
# A data size of 2^64 - 1: offset plus size wrapped to less than the
# file, and every reader of the file mapped what the sum gave, forever.
cp "$data" "$tmp/wrap.data"
printf '\377\377\377\377\377\377\377\377' |
	dd of="$tmp/wrap.data" bs=1 seek=48 conv=notrunc 2> /dev/null
expect_error "data size wrapping" "wrap.data is damaged" -i "$tmp/wrap.data"
timeout -k 10 120 perf script -i "$tmp/wrap.data" > "$out" 2>&1
rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 124 ] || [ $rc -eq 137 ] || killed $rc; then
	fail "perf script, data size wrapping: exit $rc"
elif ! grep -q "wrap.data is truncated or damaged: its data section" "$out"; then
	fail "perf script, data size wrapping: no clear error"
fi
expect_error "--show" "no section 'hot'" -i "$data" --show edges,hot
expect_error "--percent-limit" "takes a percentage" -i "$data" --percent-limit lots
exit $err
