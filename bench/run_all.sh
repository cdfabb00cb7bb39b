#!/bin/sh
# Run every benchmark (full sizes) one after another; markdown to bench/out/<name>.md,
# JSON to bench/out/<name>.json. About 45 minutes on a 2-core machine.
# Usage: bench/run_all.sh [--dsn URL]      (extra arguments go to every script)
set -e
cd "$(dirname "$0")/.."
mkdir -p bench/out
run() {
    name=$1; shift
    echo "== $name $*" >&2
    python "bench/$name.py" "$@" > "bench/out/$name.md"
}
run bench_load "$@"
run bench_reuse "$@"
run bench_query "$@"
run bench_hints "$@"
run bench_concurrency "$@"
run bench_million "$@"
run bench_eval "$@"
run bench_shards "$@"
echo "done: bench/out/" >&2
