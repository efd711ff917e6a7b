#!/usr/bin/env python3
"""Reads `perf script` output of tracepoint recordings for t-trace-*.sh.

  tp_script.py hits FILE EVENT [COMM]
      the hits of EVENT (sched:sched_switch) whose sample comm is COMM, one a
      line: "TID FIELD=VALUE ..." with the fields as perf printed them
  tp_script.py chains FILE EVENT
      per hit of EVENT: how many kernel and user frames its call chain has, and
      its user frames' symbols: "K U sym,sym,..."
"""
import re
import sys

HEAD = re.compile(r'^\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s?(.*)$')
FIELD = re.compile(r'(\w+)=(\S*)')


def records(path):
    """(head match, [frame lines]) per sample"""
    cur = None
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            m = HEAD.match(line)
            if m and not line.startswith('\t'):
                if cur:
                    yield cur
                cur = (m, [])
            elif cur and line.strip():
                cur[1].append(line.strip())
    if cur:
        yield cur


def main():
    what, path, event = sys.argv[1:4]
    comm = sys.argv[4] if len(sys.argv) > 4 else None
    for m, frames in records(path):
        if m.group(5) != event + ':' and m.group(5) != event:
            continue
        if comm and m.group(1) != comm:
            continue
        if what == 'hits':
            fields = ' '.join('%s=%s' % kv for kv in FIELD.findall(m.group(6)))
            print(m.group(2), fields)
        elif what == 'chains':
            k = sum(1 for f in frames if '[kernel.kallsyms]' in f)
            syms = [f.split()[1].split('+')[0] for f in frames if '[kernel.kallsyms]' not in f and len(f.split()) > 1]
            print(k, len(frames) - k, ','.join(syms) or '-')


main()
