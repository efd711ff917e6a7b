# Helpers of the unwinding tests t-unwind-*.sh (source after lib.sh).

# Stacks of COMM's samples in FILE, as stock perf script shows them: prints
# "M N": N samples (those with a frame named THROUGH, when given), M of them
# with a frame named SYM (the first word of the symbol, so
# "__libc_start_main_impl (inlined)" is __libc_start_main_impl).
chains_with() {
	perf script -i "$1" -F comm,tid,ip,sym 2>/dev/null | awk -v c="$2" -v s="$3" -v t="${4:-}" '
		BEGIN { RS = "" }
		{
			n_l = split($0, l, "\n"); split(l[1], h, " ")
			if (h[1] != c) next
			hs = 0; ht = t == ""
			for (i = 2; i <= n_l; i++) {
				split(l[i], f, " ")
				if (f[2] == s) hs = 1
				if (f[2] == t) ht = 1
			}
			if (ht) { n++; m += hs }
		}
		END { print m + 0, n + 0 }'
}

# The same for the samples whose leaf frame is in [LO, HI) (hex, 0x...).
# (mawk has no strtonum: addresses compare as zero-padded hex strings.)
chains_with_leaf_in() {
	perf script -i "$1" -F comm,tid,ip,sym 2>/dev/null | awk -v s="$2" -v lo="$3" -v hi="$4" '
		function key(a) { sub(/^0x/, "", a); a = sprintf("%16s", tolower(a)); gsub(/ /, "0", a); return "x" a }
		BEGIN { RS = ""; lo = key(lo); hi = key(hi) }
		{
			n_l = split($0, l, "\n"); if (n_l < 2) next
			split(l[2], f, " "); a = key(f[1])
			if (a < lo || a >= hi) next
			n++
			for (i = 2; i <= n_l; i++) { split(l[i], f, " "); if (f[2] == s) { m++; break } }
		}
		END { print m + 0, n + 0 }'
}

# perf report --children: "TOTAL SYMBOL" per symbol name.  perf can list one
# function in two rows (two dso objects for one file, e.g. when it resolves
# inlines for some of its entries only); the rows of a name are added up,
# and the raw rows are kept in FILE.rows for the log.
report_children() {
	perf report -i "$1" --stdio --children --sort sym -g none 2>/dev/null |
		awk '/^ *[0-9.]+% +[0-9.]+%/ { p = $1; sub("%", "", p); print p, $NF }' >"$1.rows"
	awk '{ t[$2] += $1 } END { for (s in t) printf "%.2f %s\n", t[s], s }' "$1.rows" | sort -rn
}

# The "unwound ..." line of perfmark record -v (stderr in FILE): the value
# before WORDS ("ended early", "at the frame limit", "without a table", ...).
unwound_count() {
	grep -o "perfmark record: unwound .*" "$1" | sed -n "s/.*[ (]\([0-9]\+\) $2.*/\1/p" | head -n 1
}

# The processes of COMM in FILE, one line each: "PID PPID M N": N of its
# samples whose first user frame is in a file whose name contains LIB, M of
# them with a frame named SYM (first word).  PPID is the parent its FORK
# names (0 without one).  A line-wise read of perf script: its task events
# and its samples' headers start a line, frames are indented.
pid_chains_in() {
	perf script -i "$1" --show-task-events -F comm,pid,ip,sym,dso 2>/dev/null |
	awk -v c="$2" -v lib="$3" -v s="$4" '
		function flush() {
			if (cur == c && user ~ lib) { n[pid]++; m[pid] += hit }
			cur = ""
		}
		/PERF_RECORD_FORK\(/ {
			flush()
			x = $0; sub(/.*FORK\(/, "", x)   # ...FORK(child:tid):(parent:ptid)
			k = x; sub(/:.*/, "", k); sub(/^[^(]*\(/, "", x); sub(/:.*/, "", x)
			par[k] = x
			next
		}
		/PERF_RECORD_/ { flush(); next }
		/^[^ \t]/ { flush(); cur = $1; pid = $2; user = ""; hit = 0; next }
		/^[ \t]/ {
			if (cur == "") next
			if (user == "" && $NF != "([kernel.kallsyms])") user = $NF
			if ($2 == s) hit = 1
			next
		}
		{ flush() }
		END { flush(); for (p in n) print p, par[p] + 0, m[p] + 0, n[p] }'
}

# Foreign load for a system-wide ehframe session (started with bg, killed at
# exit): other people's programs whose tables the recorder must build.  Each
# round copies gcc's cc1 (2.3 MiB of .eh_frame: about half a second of
# table building) under a build-id of its own, so neither the file cache nor
# the build-id finds a table for it, and runs it; then a few short programs
# (python3, gcc --version); about two rounds a second.  Every round appends
# a line to DIR/rounds.
foreign_load() {
	local dir=$1 cc1 off i=0
	cc1=$(gcc -print-prog-name=cc1) || return 1
	# the build-id note's bytes: after the 12-byte note header and "GNU\0"
	off=$(readelf -S -W "$cc1" | awk '{ for (i = 1; i < NF; i++) if ($i == ".note.gnu.build-id") print $(i + 3) }')
	[ -n "$off" ] || return 1
	off=$((16#$off + 16))
	while :; do
		i=$((i + 1))
		cp "$cc1" "$dir/cc1.$i"
		dd if=/dev/urandom of="$dir/cc1.$i" bs=1 seek="$off" count=20 conv=notrunc status=none
		"$dir/cc1.$i" --version </dev/null >/dev/null 2>&1
		rm -f "$dir/cc1.$i"
		/usr/bin/python3 -c pass
		gcc --version >/dev/null
		echo "$i" >>"$dir/rounds"
		sleep 0.3           # a pace, not a wait: others' compilers come and go
	done
}

# A CPU hog on every CPU (bg), as on a machine others share.
cpu_hogs() {
	local c
	for c in $(seq "$(nproc)"); do
		bg sh -c 'while :; do :; done'
	done
}
