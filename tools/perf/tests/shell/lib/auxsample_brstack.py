# SPDX-License-Identifier: GPL-2.0
# A perf script -s script (auxsample_python.sh): each sample's IP and
# branch stack, as 'perf script -F ip,brstack' prints them without flags,
# plus the functions of the newest branch, as the brstacksym key names
# them.
#
# usage: perf script -i <injected perf.data> -s auxsample_brstack.py


def trace_begin():
    pass


def process_event(param_dict):
    sample = param_dict['sample']
    brstack = param_dict.get('brstack', [])
    line = '%x' % sample['ip']
    for br in brstack:
        line += ' %#x/%#x' % (br['from'], br['to'])
    print(line)
    sym = param_dict.get('brstacksym', [])
    if sym:
        print('newest %s -> %s' % (sym[0]['from'], sym[0]['to']))


def trace_end():
    pass
