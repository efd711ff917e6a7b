#!/usr/bin/env bash
# Calls between the files of a lib/ folder go one way: from each object of
# the folder's static library, the functions (and data) it uses that another
# object of the folder defines, read with nm (U against T/D/B/R), make a
# graph with no circle.  Prints the graph ("a.c -> b.c c.c"), and any circle
# found, for lib/collect, lib/write and lib/engine.  A circle in another
# folder is reported by FOLDERS (e.g. FOLDERS="analyze").
. "$(dirname "$0")/lib.sh"
command -v nm >/dev/null || skip "no nm (binutils)"
FOLDERS=${FOLDERS:-collect write engine}

fail=0
for f in $FOLDERS; do
	a=$PERFMARK_BUILD/libpm$f.a
	[ -f "$a" ] || die "no $a (build first)"
	nm -A "$a" >"$T/$f.nm" 2>/dev/null || die "nm $a failed"
	/usr/bin/python3 - "$T/$f.nm" "$f" >"$T/$f.graph" <<'PY'
import collections, sys

path, folder = sys.argv[1], sys.argv[2]
defs, uses = {}, collections.defaultdict(set)
for line in open(path):
    # "lib.a:libpmF.a.p/lib_F_name.c.o:[addr] T sym"
    head, _, rest = line.rstrip("\n").rpartition(":")
    obj = head.split(":")[-1]
    parts = rest.split()
    if len(parts) < 2:
        continue
    typ, sym = parts[-2], parts[-1]
    src = obj.split("lib_" + folder + "_", 1)[-1]
    if src.endswith(".o"):
        src = src[:-2]
    if typ == "U":
        uses[src].add(sym)
    elif typ in "TDBRGSVW":
        defs.setdefault(sym, src)
edges = {s: sorted({defs[u] for u in us if u in defs and defs[u] != s}) for s, us in uses.items()}
for s in sorted(edges):
    if edges[s]:
        print(s, "->", " ".join(edges[s]))
# a circle: depth-first, a node met again while on the path
state, path_, cycles = {}, [], []
def visit(n):
    state[n] = 1
    path_.append(n)
    for m in edges.get(n, []):
        if state.get(m) == 1:
            cycles.append(path_[path_.index(m):] + [m])
        elif not state.get(m):
            visit(m)
    path_.pop()
    state[n] = 2
for n in sorted(edges):
    if not state.get(n):
        visit(n)
for c in cycles:
    print("CIRCLE", " -> ".join(c))
PY
	[ -s "$T/$f.graph" ] || die "lib/$f: no calls found between its files (nm output not understood?)" -- "$T/$f.nm"
	echo "lib/$f:"
	sed 's/^/  /' "$T/$f.graph"
	grep -q "^CIRCLE" "$T/$f.graph" && fail=1
done
[ "$fail" -eq 0 ] || die "calls between files go round in a circle (the CIRCLE lines above)"
ok "lib/{${FOLDERS// /,}}: calls between files go one way"
