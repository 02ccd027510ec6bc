#!/bin/sh
# A bot in any language (cmd:/bin/sh leftover_bot.sh TAG) that never joins and leaves behind
# what it can: a file named arena-left-TAG in /tmp and in /dev/shm, and a child in a session of
# its own (setsid, out of the bot's process group) that ignores SIGTERM. One line each,
# `leftover: NAME: WHAT`: its uid, its TMPDIR with that folder's mode and owner, which shared
# folders it could write, the filesystem of /tmp and /dev/shm, the arena-left files it found
# there (another bot's, say), and the orphan's pid.
tag=$1
echo "leftover: uid: $(id -u)"
echo "leftover: tmpdir: ${TMPDIR:-none} $(stat -c %a:%u "${TMPDIR:-/none}" 2>/dev/null)"
echo "leftover: found: $(ls /tmp /dev/shm 2>/dev/null | grep arena-left- | sort | tr '\n' ' ')"
for place in /tmp /dev/shm; do
    if echo "$tag" >"$place/arena-left-$tag" 2>/dev/null; then
        echo "leftover: wrote $place: yes"
    else
        echo "leftover: wrote $place: no"
    fi
done
echo "leftover: filesystems: $(stat -f -c %T /tmp) $(stat -f -c %T /dev/shm)"
setsid /bin/sh -c 'trap "" TERM HUP; echo "leftover: orphan: $$"; exec sleep 120' </dev/null &
sleep 0.5
