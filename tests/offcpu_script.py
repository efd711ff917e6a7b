"""Off-CPU samples from stock perf script, for tests/t-offcpu-*.sh.

    python3 tests/offcpu_script.py FILE [TID...]

prints one JSON object per offcpu-time sample of the perf.data FILE (of the
threads TID, when given): tid, time (ns), period, frames (symbols, leaf
first), pid, and the payload of lib/format/offcpu_raw.h decoded (version, state,
task_state, count, waker_flags, waker_pid, waker_tid, end, runq_ns,
nr_waker_kstack, nr_waker_ustack, and waker_stack: the addresses).  It runs perf
script twice: once for the stacks, once for the payload (perf prints them
only apart), and pairs the two in order.
"""
import json
import re
import subprocess
import sys

HEAD = re.compile(r"(\d+)/(\d+)\s+(?:\[\d+\]\s+)?(\d+)\.(\d+):\s+(\d+)\s+(\S+):\s*$")
HEX = re.compile(r"\b[0-9a-f]{4}: ((?:[0-9a-f]{2} )+)")


def _parse(text):
    out, cur = [], None
    for line in text.splitlines():
        m = HEAD.search(line)
        if m:
            cur = {"pid": int(m[1]), "tid": int(m[2]),
                   "time": int(m[3]) * 10**9 + int(m[4].ljust(9, "0")),
                   "period": int(m[5]), "event": m[6], "frames": [], "raw": b""}
            out.append(cur)
            continue
        m = HEX.search(line)
        if cur is not None and m:
            cur["raw"] += bytes.fromhex(m[1].replace(" ", ""))
            continue
        f = line.split()
        if cur is not None and len(f) >= 2 and re.fullmatch(r"[0-9a-f]+", f[0]):
            cur["frames"].append(f[1])
    return [s for s in out if s["event"] == "offcpu-time"]


def samples(path, tids=None):
    run = lambda fields: subprocess.run(["perf", "script", "-i", path, "-F", fields],
                                        capture_output=True, text=True, errors="replace").stdout
    stacks = _parse(run("pid,tid,time,event,period,ip,sym"))
    raws = _parse(run("pid,tid,time,event,period,bpf-output"))
    if len(stacks) != len(raws):
        raise SystemExit(f"perf script: {len(stacks)} stacks but {len(raws)} payloads")
    res = []
    for s, r in zip(stacks, raws):
        if (s["tid"], s["period"]) != (r["tid"], r["period"]):
            raise SystemExit("perf script's two passes disagree")
        b = r["raw"]
        u16 = lambda o: int.from_bytes(b[o:o + 2], "little")
        u32 = lambda o: int.from_bytes(b[o:o + 4], "little")
        s.update(version=u16(0), state=u16(2), task_state=u32(4), count=u32(8),
                 waker_flags=u32(12), waker_pid=u32(16), waker_tid=u32(20),
                 end=int.from_bytes(b[24:32], "little"),
                 runq_ns=int.from_bytes(b[32:40], "little"),
                 nr_waker_kstack=u32(40) if len(b) >= 48 else 0,
                 nr_waker_ustack=u32(44) if len(b) >= 48 else 0)
        nw = min(s["nr_waker_kstack"] + s["nr_waker_ustack"], max(0, (len(b) - 48) // 8))
        s["waker_stack"] = [int.from_bytes(b[48 + 8 * i:56 + 8 * i], "little") for i in range(nw)]
        del s["raw"], s["event"]
        if not tids or s["tid"] in tids:
            res.append(s)
    return res


if __name__ == "__main__":
    want = {int(t) for t in sys.argv[2:]}
    for s in samples(sys.argv[1], want):
        print(json.dumps(s))
