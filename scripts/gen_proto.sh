#!/usr/bin/env bash
# Generates Python messages, gRPC stubs and typed stubs from proto/ into sdk/arena/v1.
# With --check, generates into a scratch folder and fails if sdk/ differs.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-sdk}
out=sdk
if [ "$mode" = "--check" ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
python -m grpc_tools.protoc -Iproto \
  --python_out="$out" --mypy_out="$out" \
  --grpc_python_out="$out" --mypy_grpc_out="$out" \
  proto/arena/v1/*.proto 2>&1 | { grep -v "^Writing mypy to" || true; } >&2
touch "$out/arena/__init__.py" "$out/arena/v1/__init__.py" "$out/arena/py.typed"
if [ "$mode" = "--check" ]; then
  if ! diff -r -x '__pycache__' -x '*.pyc' "$out/arena" sdk/arena; then
    echo "generated code in sdk/arena differs from proto/: run 'make proto'" >&2
    exit 1
  fi
  echo "generated code matches proto/"
fi
