#!/usr/bin/env bash
# perfmark top, driven in tmux as a user drives it: the hot function of a
# running workload on screen, keys (move, zoom, sort), the terminal given
# back (alternate screen left, cursor shown) after q, Ctrl-C and SIGTERM, no
# process left behind when the terminal closes, names escaped, marker
# ranges, plain-text frames when stdout is not a terminal, and the live
# stream of a perfmarkd session (--session).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/daemon-lib.sh"
need_root
need_perfmark
need_daemon
command -v tmux >/dev/null || die "tmux is not installed (make check-deps installs it)"

unset TMUX     # run from inside tmux too: this is a server of its own
TMUX_SOCK=$T/tmux.sock
tm() { tmux -S "$TMUX_SOCK" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; daemon_cleanup' EXIT
# one shell in a 200x50 pane; perfmark's environment passed on
tm new-session -d -s top -x 200 -y 50 \
	"env PS1='$ ' PERFMARK_SOCKET='$PERFMARK_SOCKET' bash --norc --noprofile" ||
	die "tmux did not start"

pane() { tm capture-pane -p -t "${1:-top}"; }
# wait_pane PATTERN SECONDS [TARGET]: until the pane shows PATTERN (grep -E)
pane_has() { pane "$2" | grep -Eq -- "$1"; }
wait_pane() { wait_until "$2" pane_has "$1" "${3:-top}"; }
# seconds (with ms) on a monotonic clock
now() { awk '{ print $1 }' /proc/uptime; }
# the terminal given back: not in the alternate screen, the cursor shown
restored() { [ "$(tm display -p -t "${1:-top}" '#{alternate_on} #{cursor_flag}')" = "0 1" ]; }
run_in_pane() { tm send-keys -t top "clear; $*; echo RC=\$?" Enter; }
top_pid() { pgrep -P "$(tm display -p -t top '#{pane_pid}')" -f 'perfmark top'; }

# wait until top draws its first frame, then the hot function: within 3 s
hot_on_screen() {
	local t0 t1 t2
	t0=$(now)
	wait_pane '^perfmark top:' 60 || die "top drew no frame" -- <(pane)
	t1=$(now)
	wait_pane "$1" 3 || die "$1 not on screen 3 s after top's first frame" -- <(pane)
	t2=$(now)
	echo "top: first frame after $(awk "BEGIN { print $t1 - $t0 }") s; $1 after $(awk "BEGIN { print $t2 - $t1 }") s more"
}

SPIN=$PROGS/prog-spin
bg "$SPIN" 300
SPIN_PID=$BG_PID

# --- q: exit 0, the terminal back -----------------------------------------------------------
run_in_pane "$PERFMARK top -p $SPIN_PID"
hot_on_screen 'prog-spin +prog-spin +spin_loop'
tm display -p -t top '#{alternate_on} #{cursor_flag}' | grep -qx '1 0' ||
	die "top is not on the alternate screen with the cursor hidden"
ok "the hot function of a running workload on screen, in the alternate screen"

# keys: down, zoom into the selected row's command, out again, sort by total
tm send-keys -t top j c
wait_pane '^zoom: command prog-spin' 5 || die "c did not zoom into the command" -- <(pane)
pane | grep -E '^ +[0-9.]+%' | grep -v ' prog-spin ' && die "rows of other commands in the zoom"
tm send-keys -t top u
wait_pane '^sort: self' 5 || die "u did not zoom out" -- <(pane)
tm send-keys -t top d
wait_pane '^zoom: dso ' 5 || die "d did not zoom into a DSO" -- <(pane)
tm send-keys -t top u s
wait_pane '^sort: total' 5 || die "s did not sort by total" -- <(pane)
ok "keys: j moves, c and d zoom into the command and DSO, u zooms out, s sorts"

tm send-keys -t top q
wait_pane '^RC=0$' 10 || die "q: top did not exit 0" -- <(pane)
restored || die "q: the terminal was not given back ($(tm display -p -t top '#{alternate_on} #{cursor_flag}'))"
pane | grep -q 'perfmark top:' && die "q: top's frame still on the screen"
ok "q exits 0 and gives the terminal back"

# --- Ctrl-C and SIGTERM ----------------------------------------------------------------------
run_in_pane "$PERFMARK top -p $SPIN_PID"
wait_pane 'spin_loop' 60 || die "no spin_loop (Ctrl-C run)" -- <(pane)
tm send-keys -t top C-c
wait_pane '^RC=0$' 10 || die "Ctrl-C: top did not exit 0" -- <(pane)
restored || die "Ctrl-C: the terminal was not given back"
ok "Ctrl-C exits 0 and gives the terminal back"

run_in_pane "$PERFMARK top -p $SPIN_PID"
wait_pane 'spin_loop' 60 || die "no spin_loop (SIGTERM run)" -- <(pane)
p=$(top_pid)
[ -n "$p" ] || die "top's pid not found"
kill -TERM "$p"
wait_pane '^RC=0$' 10 || die "SIGTERM: top did not exit 0" -- <(pane)
restored || die "SIGTERM: the terminal was not given back"
ok "SIGTERM exits 0 and gives the terminal back"

# --- a closed terminal: top goes, nothing left running -----------------------------------------
tm new-window -t top -n gone "exec $PERFMARK top -p $SPIN_PID"
wait_pane 'spin_loop' 60 top:gone || die "no spin_loop (closed-terminal run)"
gp=$(tm display -p -t top:gone '#{pane_pid}')
tm kill-window -t top:gone
wait_gone 60 "$gp"
kill -0 "$gp" 2>/dev/null && die "top still runs after its terminal closed (pid $gp)"
ok "a closed terminal ends top"

# --- names are escaped: a command named with a terminal escape -------------------------------
odd=$T/$'sp\e[2Jx'
cp "$SPIN" "$odd"
bg "$odd" 300
ODD_PID=$BG_PID
run_in_pane "$PERFMARK top -p $ODD_PID"
wait_pane 'sp\\x1b\[2Jx +' 60 || die "the escape in a command's name is not shown escaped" -- <(pane)
tm send-keys -t top q
wait_pane '^RC=0$' 10 || die "q after the escaped name"
bg_kill "$ODD_PID"
ok "a command named with an escape sequence shows as sp\\x1b[2Jx"

# --- marker ranges: rate, p50, p99 -------------------------------------------------------------
bg "$PROGS/prog-phases" 2000
PH_PID=$BG_PID

# a frame drawn inside the first interval (here on a resize) has ranges with no rate yet: "-"
run_in_pane "$PERFMARK top -p $PH_PID -d 600"
wait_pane '^perfmark top:' 60 || die "top drew no frame (ranges run)" -- <(pane)
cols=200
resized_with_ranges() {
	cols=$((cols == 200 ? 199 : 200))
	tm resize-window -t top -x "$cols" -y 50
	pane_has '^render +- +[0-9.]+ms +[0-9.]+ms' top
}
wait_until 60 resized_with_ranges || die "no range line without a rate inside the first interval" -- <(pane)
tm send-keys -t top q
wait_pane '^RC=0$' 10 || die "q after the first interval's ranges"
ok "a range first seen in this interval shows its rate as -"

run_in_pane "$PERFMARK top -p $PH_PID"
# one capture per look: a frame drawn between two captures may be another interval's
render_rate() {
	pane >"$T/ranges.pane"
	rate=$(awk '$1 == "render" && $2 ~ /^[0-9]+\.[0-9]$/ && $3 ~ /ms$/ && $4 ~ /ms$/ { print $2 }' \
		"$T/ranges.pane")
	[ -n "$rate" ] && fcmp "$rate > 0"
}
wait_until 60 render_rate || die "no range line for render with a rate above 0" -- "$T/ranges.pane"
tm send-keys -t top q
wait_pane '^RC=0$' 10 || die "q after ranges"
bg_kill "$PH_PID"
ok "ranges on screen with their rate ($rate/s), p50 and p99"

# --- stdout not a terminal: plain frames, nothing for a terminal ------------------------------
"$PERFMARK" top -p "$SPIN_PID" --frames 2 >"$T/frames.txt" 2>"$T/frames.err" ||
	die "top --frames 2 into a file failed" -- "$T/frames.err"
[ "$(grep -c '^perfmark top:' "$T/frames.txt")" -eq 2 ] || die "not 2 frames" -- "$T/frames.txt"
grep -Eq 'prog-spin +prog-spin +spin_loop' "$T/frames.txt" || die "no spin_loop in frames" -- "$T/frames.txt"
grep -q $'\e' "$T/frames.txt" && die "escape sequences in the text frames"
ok "stdout not a terminal: one plain-text frame per interval"

# --- the whole system: the idle task is swapper, as perf names it --------------------------------
"$PERFMARK" top -a -d 1 --frames 3 >"$T/sys.txt" 2>"$T/sys.err" || die "top -a failed" -- "$T/sys.err"
grep -Eq '^ +[0-9.]+% +:0 ' "$T/sys.txt" && die "the idle task shows as :0" -- "$T/sys.txt"
idle=' (pv_native_safe_halt|default_idle|do_idle|cpuidle_enter_state|acpi_idle_do_entry) *$'
if grep -Eq "$idle" "$T/sys.txt"; then
	grep -E "$idle" "$T/sys.txt" | grep -Evq '^ +[0-9.]+% +swapper ' &&
		die "an idle function under a command other than swapper" -- "$T/sys.txt"
	ok "top -a: the idle task's samples show as swapper"
else
	ok "top -a: no idle sample in 3 s (the machine was busy): nothing named :0"
fi

# --- bad input: one line, exit 1 --------------------------------------------------------------
for args in "--session ../x" "--session nosuch" "--session s -F 99" "extra" "-d 0" "--sort nope" \
	"-p 2147483647" "-e nosuch"; do
	# shellcheck disable=SC2086
	"$PERFMARK" top $args >"$T/bad.out" 2>"$T/bad.err" </dev/null
	rc=$?
	[ "$rc" -eq 1 ] && [ "$(wc -l <"$T/bad.err")" -eq 1 ] && grep -q '^perfmark: ' "$T/bad.err" ||
		die "top $args: exit $rc, not one error line" -- "$T/bad.err"
done
ok "bad options and unknown sessions: one error line, exit 1"

# --- a named session of perfmarkd --------------------------------------------------------------
daemon_start
pm session create topsess -F 997 --ring 16M || die "session create failed" -- "$T/pmd.log"
run_in_pane "$PERFMARK top --session topsess"
hot_on_screen 'prog-spin +prog-spin +spin_loop'
tm send-keys -t top q
wait_pane '^RC=0$' 10 || die "q: top --session did not exit 0" -- <(pane)
restored || die "top --session: the terminal was not given back"
ok "top --session shows the running session's hot function; q exits 0"

# the session stops under it: said on screen, q still quits
run_in_pane "$PERFMARK top --session topsess"
wait_pane 'spin_loop' 60 || die "no spin_loop (session stop run)" -- <(pane)
pm session stop topsess || die "session stop failed"
wait_pane 'session ended|stream ended' 10 || die "the session's end is not said" -- <(pane)
tm send-keys -t top q
wait_pane '^RC=0$' 10 || die "q after the session ended"
restored || die "the terminal was not given back after the session ended"
ok "a session that stops is said on screen; q still exits 0"
