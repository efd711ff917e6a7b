#!/usr/bin/env bash
# File sessions across kill -9: every file in the directory is read by stock
# perf report (the one being written up to its last complete round), and
# the restarted daemon goes on in a new file.  --rotate TIME rotates by
# time; -z compresses ring snapshots and every rotated file; `perfmark
# session --help` and each subcommand's --help print their usage.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
[ -x "$PROGS/prog-emit" ] || skip "no $PROGS/prog-emit"

pm session --help >"$T/help" || die "session --help failed"
for c in create list show snapshot attach stop start delete; do
	grep -q "perfmark session $c" "$T/help" || grep -q "session stop|start|delete" "$T/help" ||
		die "session --help does not show $c" -- "$T/help"
	pm session "$c" --help | grep -q "^usage: perfmark session $c" || die "session $c --help"
done
ok "perfmark session --help and every subcommand's --help"

daemon_start
mkdir "$T/out" "$T/tm"   # zf: session create makes it

# --- kill -9 in the middle of writing a file -------------------------------
# once a file has been rotated out (on a loaded machine prog-spin gets a
# fraction of the CPU, and the samples of its CPU time fill the files)
pm session create f9 -F 999 -g --output "$T/out" --rotate 256K || die "create failed" -- "$T/pmd.log"
bg "$PROGS/prog-spin" 600
spin=$BG_PID
files_at_least() { [ "$(ls "$T"/out/f9-*.perf.data 2>/dev/null | wc -l)" -ge "$1" ]; }
wait_until 300 files_at_least 2 || die "no file rotated out in 300 s" -- "$T/pmd.log"
daemon_kill9
ls "$T"/out/f9-*.perf.data >"$T/before.txt" || die "no files written"
last=$(tail -n 1 "$T/before.txt")
md5sum $(cat "$T/before.txt") >"$T/md5.before"
for f in $(cat "$T/before.txt"); do
	perf report -i "$f" --stdio --sort comm >"$T/rep" 2>&1
	grep -q '%.*prog-spin' "$T/rep" && continue
	# the one being written may hold only what every file starts with (the
	# processes' names) when the kill came right after a rotation: perf reads
	# it and finds no samples, and nothing else may be wrong with it
	[ "$f" = "$last" ] && grep -q 'has no samples' "$T/rep" &&
		! grep -qiE 'warning|unexpected|corrupt|failed|invalid' "$T/rep" && continue
	die "perf report shows no prog-spin samples in $f (killed daemon)" -- "$T/rep" "$T/pmd.log"
done
ok "kill -9: $(wc -l <"$T/before.txt") files, each read by perf report, the last one ($(basename "$last")) too"
daemon_start
# samples again: the restarted daemon writes them in its current file
wait_until 120 session_at_least f9 samples 1 || die "no samples after the restart" -- "$T/pmd.log"
bg_kill "$spin"
pm session show f9 >"$T/show.txt"
cur=$(awk '/^sink:/ { for (i = 1; i <= NF; i++) if ($i == "current") print $(i + 1) }' "$T/show.txt")
[ -n "$cur" ] || die "no current file after the restart" -- "$T/show.txt"
grep -qx "$T/out/$cur" "$T/before.txt" && die "the restarted daemon writes into $cur again"
[ "$cur" \> "$(basename "$last")" ] || die "the new file $cur does not come after $(basename "$last")"
md5sum -c --quiet "$T/md5.before" || die "the files written before the kill changed"
pm session stop f9
perf report -i "$T/out/$cur" --stdio 2>/dev/null | grep -q '%' || die "the new file $cur is unreadable"
ok "restart: goes on in a new file ($cur); the old files untouched"

# --- --rotate TIME ---------------------------------------------------------
# a file is rotated out at the first round it is 1 s old, the next one opened
# when data comes: runs 1.5 s apart each find the one before's file rotated out
# (on an idle machine the runs may be all the data there is)
pm session create tm -F 99 --output "$T/tm" --rotate 1s || die "create --rotate 1s failed"
for i in 1 2 3 4; do
	"$PROGS/prog-emit" 50 "tm$i" >/dev/null
	let_time_pass 1.5 "rotation by age: 4 runs 1.5 s apart, each past the 1 s of the file before"
done
pm session stop tm
n=$(ls "$T"/tm/tm-*.perf.data | wc -l)
[ "$n" -ge 3 ] || die "--rotate 1s: 4 runs 1.5 s apart made $n files"
total=0
for f in "$T"/tm/tm-*.perf.data; do
	m=$(markers_in "$f" 'tm[0-9] seq=')
	total=$((total + m))
done
[ "$total" -eq 200 ] || die "the time-rotated files hold $total of 200 markers"
pm session show tm | grep -q 'rotate every 1 s' || die "show does not say the rotation"
ok "--rotate 1s: $n files, together all 200 markers"

# --- -z on a ring and on files -----------------------------------------------
pm session create zr -z -F 99 --ring 16M || die "create -z ring failed"
pm session create zf -z3 -F 99 --output "$T/zf" --rotate 64K || die "create -z file failed"
[ -d "$T/zf" ] || die "session create did not make its --output directory"
pm session create zn -F 99 --output "$T/no/such" 2>"$T/zn.err" && die "create into a missing parent worked"
[ "$(cat "$T/zn.err")" = "perfmark: $T/no/such: No such file or directory" ] ||
	die "create into a missing parent: not one clear line" -- "$T/zn.err"
pid=$("$PROGS/prog-emit" 500 zz | awk '/^pid/ { print $2 }')
bg "$PROGS/prog-spin" 1; wait "$BG_PID"
pm session snapshot zr -o "$T/zr.data" || die "snapshot of the -z ring failed"
perf report -i "$T/zr.data" --header-only 2>/dev/null | grep -qi 'compressed *: *Zstd' ||
	die "the ring snapshot is not zstd-compressed"
[ "$(markers_in "$T/zr.data" 'zz seq=')" -eq 500 ] || die "the compressed ring snapshot lacks markers"
pm session stop zf
n=0
for f in "$T"/zf/zf-*.perf.data; do
	perf report -i "$f" --header-only 2>/dev/null | grep -qi 'compressed *: *Zstd, level = 3' ||
		die "$f is not compressed at level 3"
	perf report -i "$f" --stdio 2>/dev/null | grep -q '%' || die "perf report cannot read $f"
	n=$((n + 1))
done
total=0
for f in "$T"/zf/zf-*.perf.data; do total=$((total + $(markers_in "$f" 'zz seq='))); done
[ "$total" -eq 500 ] || die "the compressed files hold $total of 500 markers"
ok "-z: ring snapshot and $n rotated files zstd-compressed, all read by perf, all 500 markers"
