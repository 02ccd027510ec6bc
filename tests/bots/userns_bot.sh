#!/bin/sh
# A bot in any language (cmd:/bin/sh userns_bot.sh) that never joins and tries to make a user
# namespace of its own, in which it would be root over a fresh set of namespaces and reach
# kernel code an ordinary process does not: `userns: made` or `userns: refused: WHY`.
if why=$(unshare --user --map-root-user id -u 2>&1); then
    echo "userns: made (uid $why inside)"
else
    echo "userns: refused: $why"
fi
