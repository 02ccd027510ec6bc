#!/bin/sh
# A bot in any language (cmd:/bin/sh whoami_bot.sh SECRET FORKS PID SETUID_ID) that never joins:
# it says which uid it runs as, then tries to read the file SECRET, to run FORKS processes at
# once, to signal the process PID (the referee), and to gain root through the setuid program
# SETUID_ID. One line each, `whoami: NAME: WHAT`.
echo "whoami: uid: $(id -u)"
if cat "$1" >/dev/null 2>&1; then echo "whoami: secret: read"; else echo "whoami: secret: refused"; fi
# Each child sleeps with its output elsewhere, so the command substitution returns at once; a
# shell that cannot fork gives up, and the last number it printed is how far it got.
forked=$( (n=0; while [ "$n" -lt "$2" ]; do sleep 5 </dev/null >/dev/null 2>&1 & n=$((n + 1)); echo "$n"; done) 2>/dev/null | tail -n 1)
echo "whoami: forked: ${forked:-0}"
if kill -0 "$3" 2>/dev/null; then echo "whoami: signal: sent"; else echo "whoami: signal: refused"; fi
echo "whoami: setuid: $("$4" 2>&1)"
