#!/bin/sh
# A bot in any language (cmd:/bin/sh state_reader.sh NAME=PATH ...) that never joins: it tries
# to read each PATH, and prints what it can read whole on its output, as a bot that wanted the
# deal secret, the tokens or other matches' replays would. One line each, `reader: NAME: read`
# (then the bytes) or `reader: NAME: refused`. NAME=PATH rather than PATH, so that the referee
# does not take the paths for the bot's own files.
for pair in "$@"; do
    name=${pair%%=*}
    path=${pair#*=}
    if cat "$path" >/dev/null 2>&1; then
        echo "reader: $name: read"
        cat "$path"
        echo
    else
        echo "reader: $name: refused"
    fi
done
