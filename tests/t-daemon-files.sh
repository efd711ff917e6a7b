#!/usr/bin/env bash
# perfmarkd file sink: --rotate SIZE makes several files, each a complete
# perf.data that perf report reads, --keep bounds them; ENOSPC on a small
# tmpfs puts the session in an error state shown by `show`, the files
# already written stay readable (compressed ones too) and the daemon keeps
# answering.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_daemon
daemon_start

mkdir "$T/out"
pm session create files1 -F 2000 -g --output "$T/out" --rotate 256K --keep 4 || die "create failed" -- "$T/pmd.log"
"$PROGS/prog-spin" 3 >/dev/null 2>&1
"$DEMO" 0.3 >/dev/null 2>&1
pm session show files1 || die "show failed"
pm session snapshot files1 -o "$T/cur.data" || die "snapshot of the current file failed"
pm session stop files1
n=$(ls "$T/out" | grep -c '^files1-.*\.perf\.data$')
[ "$n" -ge 2 ] || die "expected rotated files, got $n" -- "$T/pmd.log"
[ "$n" -le 4 ] || die "--keep 4 left $n files"
for f in "$T"/out/files1-*.perf.data; do
	perf report -i "$f" --stdio 2>/dev/null | grep -q '^ *[0-9.]*%' || die "perf report shows nothing for $f"
	perf report -i "$f" --stdio --sort comm 2>/dev/null | grep -q '%' || die "no comm in $f"
done
perf report -i "$T/cur.data" --stdio 2>/dev/null | grep -q '%' || die "snapshot of a file sink unreadable"
ok "$n rotated files, each read by perf report"

# ENOSPC, plain and compressed: a compressed file is unreadable to perf
# without its features (COMPRESSED gives the buffer size), so they must
# follow the data that is kept however the disk fills
trap 'umount "$T"/small-* 2>/dev/null; daemon_cleanup' EXIT
pm session create bystander -F 99 || die "second session failed"
for z in plain zstd; do
	mkdir "$T/small-$z"
	# zstd takes prog-spin's samples to a twentieth: a smaller disk to fill
	size=1M zopt=()
	[ "$z" = zstd ] && size=128K zopt=(-z)
	mount -t tmpfs -o size=$size tmpfs "$T/small-$z" || skip "cannot mount a tmpfs"
	pm session create "full-$z" -F 4000 -g "${zopt[@]}" --output "$T/small-$z" ||
		die "create on tmpfs failed" -- "$T/pmd.log"
	for i in $(seq 100); do
		pm session show "full-$z" | grep -q '^state: *error' && break
		"$PROGS/prog-spin" 0.3 >/dev/null 2>&1
	done
	pm session show "full-$z" >"$T/show.txt"
	grep -q '^state: *error' "$T/show.txt" || die "$z: no error state after filling the disk" -- "$T/show.txt" "$T/pmd.log"
	grep -qi 'no space' "$T/show.txt" || die "$z: the error does not say why" -- "$T/show.txt"
	pm session show "full-$z" --json | grep -q '"state":"error"' || die "$z: --json state not error"
	pm session list | grep -q '^bystander .*running' || die "$z: other session affected"
	f=$(ls "$T/small-$z"/full-"$z"-*.perf.data | head -1)
	perf report -i "$f" --stdio >"$T/full.rep" 2>&1
	grep -q '%' "$T/full.rep" || die "$z: the file written before ENOSPC is unreadable" -- "$T/full.rep"
	if [ "$z" = zstd ]; then
		perf report --header-only -i "$f" 2>&1 | grep -q '^# compressed : Zstd' ||
			die "$z: the file kept lacks its COMPRESSED feature"
	fi
	cat "$T/show.txt"
	pm session delete "full-$z"
	kill -0 "$PMD_PID" || die "daemon died"
	ok "ENOSPC ($z): error state, file readable ($(stat -c %s "$f") bytes), daemon serving"
done
pm session delete bystander
