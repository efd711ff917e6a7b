#!/usr/bin/env bash
# The layers of lib/ are enforced by the build, not by convention: each folder
# is its own static library, compiled with its own headers and those of the
# folders below it only (meson.build, "layers").  Here, with the very command
# the build compiles a file of each folder with (compile_commands.json), a
# header of every other folder is included: one below builds, one above does
# not ("No such file").  Then a deliberate upward include is put into a copy
# of lib/common/escape.c and compiled the same way: the build of that file
# fails, and the unchanged copy builds.
. "$(dirname "$0")/lib.sh"
DB=$PERFMARK_BUILD/compile_commands.json
[ -f "$DB" ] || die "no $DB: meson writes it on setup"
command -v python3 >/dev/null || die "python3 missing"

# the layering as the README states it: each folder and the folders it may use
declare -A MAY=(
	[common]=""
	[format]="common"
	[write]="common"
	[collect]="common format write"
	[control]="common collect"
	[engine]="common format write collect"
	[analyze]="common format write collect"
)

# cmd FOLDER: the compile command of one of its files, to run in its directory
python3 - "$DB" "$PERFMARK_SRC" >"$T/cmds" <<'EOF' || die "cannot read $DB"
import json, shlex, sys, os
db, src = json.load(open(sys.argv[1])), os.path.realpath(sys.argv[2])
seen = {}
for e in db:
    f = os.path.realpath(os.path.join(e["directory"], e["file"]))
    rel = os.path.relpath(f, src)
    parts = rel.split(os.sep)
    if len(parts) == 3 and parts[0] == "lib" and parts[2].endswith(".c") and parts[1] not in seen:
        args = e.get("arguments") or shlex.split(e["command"])
        # drop the output and the source: keep compiler, flags, include dirs
        out, skip = [], False
        for a in args:
            if skip:
                skip = False
                continue
            if a in ("-o", "-MF", "-MQ", "-MT"):
                skip = True
                continue
            if a in ("-c", "-MD") or a == e["file"]:
                continue
            out.append(a)
        seen[parts[1]] = (e["directory"], out)
for k, (d, a) in seen.items():
    print(k + "\t" + d + "\t" + " ".join(shlex.quote(x) for x in a))
EOF

# try FOLDER FILE: compile FILE (C) with FOLDER's command; its diagnostics in $T/try.err
try() {
	local line dir args
	line=$(grep -P "^$1\t" "$T/cmds") || die "no compile command for a file of lib/$1" -- "$T/cmds"
	dir=$(cut -f2 <<<"$line")
	args=$(cut -f3 <<<"$line")
	(cd "$dir" && eval "$args" -fdiagnostics-color=never -fsyntax-only -x c "$2") >"$T/try.err" 2>&1
}

# a header of each folder (one that has no include of its own folder's others is not needed:
# preprocessing the include is what is checked)
checked=0
for from in "${!MAY[@]}"; do
	for to in "${!MAY[@]}"; do
		[ "$from" = "$to" ] && continue
		h=$(cd "$PERFMARK_SRC/lib/$to" && ls *.h | grep -v -- '-int\.h$\|_int\.h$' | head -n 1)
		[ -n "$h" ] || continue
		printf '#include "%s"\nint layers_probe;\n' "$h" >"$T/probe.c"
		if [[ " ${MAY[$from]} " == *" $to "* ]]; then
			try "$from" "$T/probe.c" || die "lib/$from may use lib/$to, but its $h does not build there" -- "$T/try.err"
		else
			if try "$from" "$T/probe.c"; then
				die "lib/$from built with lib/$to's $h: an upward (or sideways) include would pass"
			fi
			grep -q "$h: No such file" "$T/try.err" || die "lib/$from with lib/$to's $h failed, but not for want of it" -- "$T/try.err"
		fi
		checked=$((checked + 1))
	done
done
ok "$checked pairs of folders: each includes the headers below it and none above"

# the deliberate upward include: lib/common/escape.c with a lib/write header
cp "$PERFMARK_SRC/lib/common/escape.c" "$T/escape.c"
try common "$T/escape.c" || die "lib/common/escape.c does not build as it is" -- "$T/try.err"
{ echo '#include "sinks.h"'; cat "$PERFMARK_SRC/lib/common/escape.c"; } >"$T/escape-up.c"
try common "$T/escape-up.c" && die "lib/common/escape.c including lib/write's sinks.h built"
grep -q 'sinks.h: No such file' "$T/try.err" || die "the upward include failed for another reason" -- "$T/try.err"
ok "lib/common/escape.c builds; with #include \"sinks.h\" (lib/write) it does not: $(grep -m 1 -o 'fatal error: .*' "$T/try.err")"
