#!/usr/bin/env bash
# buf breaking: the protos in the work tree against the previous version of proto/.
#
# The previous version is what proto/ held before its latest change: HEAD's protos when the
# work tree changes them (a developer editing), else those of the parent of the last commit that
# changed proto/ on the first-parent line (on main, a merge that brought a proto change counts as
# that change, and its first parent is main before it). Comparing with HEAD alone would find
# nothing to check once a commit that does not touch the protos follows the change.
#
# That needs the history: a shallow clone is deepened (git fetch --unshallow) and, where that
# cannot be done and the commit before the change is cut off, the check fails saying so rather
# than comparing with the wrong version or with none.
set -euo pipefail
cd "$(dirname "$0")/.."
BUF=(npx --yes @bufbuild/buf@1.75.0)

shallow=false
if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
  echo "proto-breaking: this clone is shallow: fetching its history to find the previous protos"
  timeout 120 git fetch --quiet --unshallow || shallow=true
fi

if ! git diff --quiet HEAD -- proto/; then
  base=HEAD
  why="HEAD (the work tree changes proto/)"
else
  latest=$(git log -1 --first-parent --format=%H -- proto/)
  if [ -z "$latest" ] || ! base=$(git rev-parse --verify --quiet "$latest^1"); then
    if [ "$shallow" = true ]; then
      # A shallow clone's oldest commit looks as if it added proto/: its parent is cut off.
      echo "proto-breaking: FAILED: this clone is shallow and its history could not be" \
        "fetched, so the version of proto/ before its latest change is not here to compare" \
        "with; clone with full history (no --depth), or run 'git fetch --unshallow'" >&2
      exit 1
    fi
    echo "proto-breaking: proto/ has no earlier version to compare with: nothing to check"
    exit 0
  fi
  why="$(git rev-parse --short "$base"), before $(git log -1 --format='%h (%s)' "$latest" | cut -c1-90)"
fi

if ! git cat-file -e "$base:proto" 2>/dev/null; then
  echo "proto-breaking: $why has no proto/ folder: nothing to check"
  exit 0
fi
previous=$(mktemp -d)
trap 'rm -rf "$previous"' EXIT
# The previous protos under today's buf.yaml: the module layout is today's, the rules too.
git archive "$base" proto | tar -x -C "$previous"
cp buf.yaml "$previous/"
echo "proto-breaking: proto/ against $why"
"${BUF[@]}" breaking --against "$previous"
echo "proto-breaking: no breaking change"
