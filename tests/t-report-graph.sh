#!/usr/bin/env bash
# report -g caller|callee (issue 22) on prog-unwind's call tree six deep
# (main -> t1 -> t2 -> t3 -> {t4 -> t5 -> t6, s4}, recorded with
# --call-graph ehframe): every level's children % within 1 point of what
# stock perf report --children gives each function on the same file, in
# the JSON and the text; the tree's shape is the program's; -g callee
# starts from the leaf (spin, with perf's self %) and reaches each t up its
# callers; the text and the JSON agree.
. "$(dirname "$0")/lib.sh"
need_root; need_perf; need_perfmark; need_bpffs
command -v python3 >/dev/null || skip "python3 missing"
[ -x "$PROGS/prog-unwind" ] || skip "no $PROGS/prog-unwind"

F=$T/tree.data
"$PERFMARK" record --call-graph ehframe -F 2000 -o "$F" -- "$PROGS/prog-unwind" tree 1.5 \
	>"$T/out" 2>"$T/rec.err" || die "record --call-graph ehframe failed" -- "$T/rec.err"
perf report -i "$F" --stdio --children --sort sym -g none 2>/dev/null >"$T/perf.txt"
"$PERFMARK" report -i "$F" -g caller,0 --json >"$T/caller.json" 2>"$T/err" || die "report -g caller failed" -- "$T/err"
"$PERFMARK" report -i "$F" -g caller,0 >"$T/caller.txt" 2>"$T/err" || die "report -g caller (text) failed" -- "$T/err"
"$PERFMARK" report -i "$F" -g callee --json >"$T/callee.json" 2>"$T/err" || die "report -g callee failed" -- "$T/err"
"$PERFMARK" report -i "$F" -g callee >"$T/callee.txt" 2>"$T/err" || die "report -g callee (text) failed" -- "$T/err"

python3 - "$T/perf.txt" "$T/caller.json" "$T/caller.txt" "$T/callee.json" <<'PY' ||
import json, re, sys
perf = {}
for line in open(sys.argv[1]):
    m = re.match(r"^\s+([\d.]+)%\s+([\d.]+)%\s+\[.\] (\S+)", line)
    if m:
        perf.setdefault(m.group(3), (float(m.group(1)), float(m.group(2))))
caller, callee = json.load(open(sys.argv[2])), json.load(open(sys.argv[4]))
assert caller["graph"]["order"] == "caller" and callee["graph"]["order"] == "callee"

def child(node, name):
    for n in node.get("nodes", []):
        if n["name"] == name:
            return n
    raise AssertionError(f"no {name} under {node.get('name', 'the root')}: "
                         f"{[n['name'] for n in node.get('nodes', [])]}")

def find(nodes, name):          # depth first, the heaviest path first
    for n in nodes:
        if n["name"] == name:
            return n
        hit = find(n.get("nodes", []), name)
        if hit:
            return hit
    return None

# the program's tree, as the caller graph has it: main -> t1 -> t2 -> t3 -> {t4 -> t5 -> t6, s4}
main = find(caller["graph"]["nodes"], "main")
assert main, "no main in the caller graph"
levels = {"main": main}
levels["t1"] = child(main, "t1")
levels["t2"] = child(levels["t1"], "t2")
levels["t3"] = child(levels["t2"], "t3")
levels["t4"] = child(levels["t3"], "t4")
levels["s4"] = child(levels["t3"], "s4")
levels["t5"] = child(levels["t4"], "t5")
levels["t6"] = child(levels["t5"], "t6")
for name, node in levels.items():
    want = perf[name][0]
    got = node["children_pct"]
    print(f"  {name}: children {got:.2f} % (perf report --children {want:.2f} %)")
    assert abs(got - want) <= 1.0, (name, got, want)
    assert node["dso"] == "prog-unwind", node["dso"]
# each level holds its callees: children >= self + the children below
for name, node in levels.items():
    below = sum(n["children_pct"] for n in node.get("nodes", []))
    assert node["children_pct"] + 0.02 >= node["self_pct"] + below, (name, node)

# the text shows the same numbers, each level one step further in
depth = {}
for line in open(sys.argv[3]):
    m = re.match(r"^\s+([\d.]+)%\s+([\d.]+)%\s+\d+\s+prog-unwind(\s+)(t[1-6]|s4)$", line)
    if m and m.group(4) not in depth:
        depth[m.group(4)] = (len(m.group(3)), float(m.group(1)))
for a, b in (("t1", "t2"), ("t2", "t3"), ("t3", "t4"), ("t4", "t5"), ("t5", "t6"), ("t3", "s4")):
    assert depth[b][0] == depth[a][0] + 2, (a, b, depth)
for name in depth:
    assert abs(depth[name][1] - levels[name]["children_pct"]) < 0.005, (name, depth[name])

# callee: from the leaf up; spin's total there is its self in perf
spin = child(callee["graph"], "spin")
print(f"  callee: spin {spin['children_pct']:.2f} % (perf self {perf['spin'][1]:.2f} %)")
assert abs(spin["children_pct"] - perf["spin"][1]) <= 1.0
assert spin["self_pct"] == spin["children_pct"]
ow = child(spin, "own_work")
t6 = child(ow, "t6")
assert abs(t6["children_pct"] - levels["t6"]["children_pct"]) <= 1.0, t6
assert child(t6, "t5") and child(child(t6, "t5"), "t4")
PY
	die "report -g disagrees with perf report --children or with the program's tree" -- "$T/caller.txt" "$T/perf.txt"
ok "-g caller: every level of the six-deep tree within 1 point of perf report --children; -g callee from spin up"

grep -q '^# call graph (-g callee)' "$T/callee.txt" && grep -Eq '^ +[0-9.]+% +[0-9.]+% +[0-9]+ +prog-unwind +spin$' "$T/callee.txt" ||
	die "-g callee text: no spin at its first level" -- "$T/callee.txt"
grep -Eq '^# [0-9]+ call paths under 0.5% left out' "$T/callee.txt" ||
	die "-g callee: the paths under the threshold are left out silently" -- "$T/callee.txt"
ok "-g callee text, and it says what its threshold left out"
echo "t-report-graph: all checks passed"
