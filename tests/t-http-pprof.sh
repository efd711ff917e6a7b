#!/usr/bin/env bash
# perfmarkd --http, GET /debug/pprof/profile read by a real client (Debian's
# go tool pprof over real HTTP): the last 2 s of a ring session show the
# known workload's hot function against the next one as `perfmark report`
# has them in a snapshot of the same session; -tagfocus range=render
# keeps render's samples; labels pid and comm are there; without session=
# (as Parca and Alloy ask) the one exposed session answers.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/http-lib.sh"
need_http
command -v go >/dev/null || die "go (golang-go) is not installed: make check installs it"
export GOCACHE=$T/gocache GOPATH=$T/gopath HOME=$T GOTOOLCHAIN=local PPROF_TMPDIR=$T/pprof
http_daemon

# the workload (render_scene 3 : update_world 1 by CPU time, whatever the
# load), then a session on it alone
PM_GO_FILE=$T/go "$PROGS/prog-latency" --cpu 900 >"$T/wl.out" 2>&1 &
wl=$!; _bg_pids+=("$wl")
wait_lines "$T/wl.out" || die "prog-latency did not start" -- "$T/wl.out"
pm session create hot -p "$wl" -g -F 20000 --ring 256M || die "create failed" -- "$T/pmd.log"
touch "$T/go"   # its sessions are attached: the workload starts
# enough samples for a share within 3 points on a loaded machine, and a
# session older than the 2 s asked (so that they cut the ring)
born=$(date +%s)
enough() { [ "$(show_field hot samples)" -ge 20000 ] && [ $(( $(date +%s) - born )) -ge 5 ]; }
wait_for 120 enough || die "the session collected too few samples" -- "$T/pmd.log"

URL="$HTTP:$HTTP_PORT/debug/pprof/profile?seconds=2&session=hot"
go tool pprof -timeout 300 -top -nodecount=50 "$URL" >"$T/top.txt" 2>"$T/top.err" || die "go tool pprof failed" -- "$T/top.err" "$T/pmd.log"
pm session snapshot hot -o "$T/snap.data" || die "snapshot failed"
kill -0 "$wl" 2>/dev/null || die "the workload ended before the scrape: its span is not steady"
"$PERFMARK" report -i "$T/snap.data" --json >"$T/report.json" || die "perfmark report failed"
python3 - "$T/top.txt" "$T/report.json" <<'PY' || die "pprof over HTTP and perfmark report disagree" -- "$T/top.txt"
import json, re, sys
pprof = {}
for line in open(sys.argv[1]):
    m = re.match(r"\s*\S+\s+([\d.]+)%\s+[\d.]+%\s+\S+\s+[\d.]+%\s+(.+)$", line)
    if m:
        pprof[m.group(2).strip()] = pprof.get(m.group(2).strip(), 0) + float(m.group(1))
rep = {}
for c in json.load(open(sys.argv[2]))["commands"]:
    for f in c["functions"]:
        rep[f["name"]] = rep.get(f["name"], 0) + f["self_pct"]
print("pprof :", sorted(pprof.items(), key=lambda x: -x[1])[:4])
print("report:", sorted(rep.items(), key=lambda x: -x[1])[:4])
# render_scene, not necessarily first: on this VM the kernel's irq enable
# (pvm_irq_enable, where the sampling interrupt lands after the workload's
# clock_gettime calls) can take as large a share
top = "render_scene"
for shares in (rep, pprof):
    assert shares.get(top, 0) >= 15 and shares[top] > 1.5 * shares.get("update_world", 0), shares
# pprof has the last 2 s, the snapshot all the session kept: the kernel's
# share moves with the machine's load between the two (a loaded run: 18 %
# of the whole, 15 % of the last 2 s), the workload's own 3:1 split does
# not.  So: render_scene's part of the two functions, closely; its share
# of everything, loosely.
split = lambda s: s[top] / (s[top] + s.get("update_world", 0))
assert abs(split(pprof) - split(rep)) <= 0.04, (split(pprof), split(rep))
assert abs(pprof[top] - rep[top]) <= 8.0, (pprof[top], rep[top])
PY
ok "go tool pprof -top over HTTP: render_scene against update_world as perfmark report has it"

# -tagfocus range=render, and the labels
curl -s -o "$T/p.pb.gz" "$URL" || die "curl failed"
[ "$(head -c 2 "$T/p.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || die "not gzip" -- "$T/p.pb.gz"
go tool pprof -top -tagfocus range=render "$T/p.pb.gz" >"$T/render.txt" 2>&1 || die "-tagfocus failed" -- "$T/render.txt"
go tool pprof -tags "$T/p.pb.gz" >"$T/tags.txt" 2>&1 || die "-tags failed" -- "$T/tags.txt"
python3 - "$T/render.txt" "$T/tags.txt" "$wl" <<'PY' || die "-tagfocus range=render is wrong" -- "$T/render.txt" "$T/tags.txt"
import re, sys
r = {}
for line in open(sys.argv[1]):
    m = re.match(r"\s*\S+\s+([\d.]+)%\s+[\d.]+%\s+\S+\s+[\d.]+%\s+(.+)$", line)
    if m:
        r[m.group(2).strip()] = float(m.group(1))
# (the kernel's irq enable may rank above it, as in the whole profile)
assert r.get("render_scene", 0) >= 15, r
assert "update_world" not in r, r
tags = open(sys.argv[2]).read()
assert re.search(r"\brender\b", tags) and re.search(r"\bpm-latency\b", tags), tags
assert re.search(r"\bpid\b", tags) and sys.argv[3] in tags, "no pid label"
PY
ok "-tagfocus range=render keeps render_scene only; labels range, comm, pid"

# seconds=2 is the last 2 s of the ring, not all of it
go tool pprof -timeout 600 -top "$HTTP:$HTTP_PORT/debug/pprof/profile?seconds=300&session=hot" >"$T/all.txt" 2>&1 ||
	die "seconds=300 failed" -- "$T/all.txt"
python3 - "$T/top.txt" "$T/all.txt" <<'PY' || die "seconds=2 does not cut the ring" -- "$T/top.txt" "$T/all.txt"
import re, sys
def total(p):
    t = open(p).read()
    m = re.search(r"Total samples = ([\d.]+)(ms|s)\b", t)
    return float(m.group(1)) * (1 if m.group(2) == "ms" else 1000)
print("last 2 s:", total(sys.argv[1]), "ms; the whole ring:", total(sys.argv[2]), "ms")
assert total(sys.argv[1]) < 0.9 * total(sys.argv[2])
assert re.search(r"Duration: (1\.[5-9]\d*|2)s", open(sys.argv[1]).read())
PY
ok "seconds=2: the last 2 s of the ring only"

# as Parca and Alloy ask: no session (the only exposed one), seconds=N
# (2 s, as above: a loaded machine can give the workload little of 1 s)
code=$(http_code "$HTTP:$HTTP_PORT/debug/pprof/profile?seconds=2" "$T/def.pb.gz")
[ "$code" = 200 ] || die "no session=: $code" -- "$T/def.pb.gz"
go tool pprof -top -nodecount=50 "$T/def.pb.gz" >"$T/def.txt" 2>&1
grep -q render_scene "$T/def.txt" || die "the default session's profile lacks render_scene" -- "$T/def.txt"
ok "without session=: the one exposed session's profile"
kill "$wl" 2>/dev/null

# the workload gone, the last second holds none of its samples: 404 with
# the reason, not a profile of nothing (it had a negative duration)
gone() { [ "$(http_code "$HTTP:$HTTP_PORT/debug/pprof/profile?seconds=1&session=hot" "$T/gone.txt")" = 404 ]; }
wait_for 120 gone || die "no 404 for a window without samples" -- "$T/gone.txt"
grep -q 'no samples in the last 1 s' "$T/gone.txt" || die "the 404 does not say why" -- "$T/gone.txt"
ok "a window without samples: 404, $(head -c 60 "$T/gone.txt")"
pm session delete hot >/dev/null || die "delete failed"
