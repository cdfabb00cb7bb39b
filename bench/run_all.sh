#!/bin/sh
# Run every benchmark (full sizes) one after another; markdown to bench/out/<name>.md,
# JSON to bench/out/<name>.json. About 75 minutes on a 2-core machine. Not here:
# model_candidates.py (needs the model extra) and bench_history.py's corpus mode
# (needs a history corpus built first; see bench/README.md).
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
run bench_speed "$@"
run bench_shards "$@"
echo "== bench_extract (no server; exits 1 when under its target)" >&2
python bench/bench_extract.py > bench/out/bench_extract.md || true
run bench_bases "$@"
run fused_weight "$@"
run rrf_k "$@"
# this checkout's own history: 30 consecutive commits loaded with --rev
echo "== bench_history commits . --commits 30 $*" >&2
python bench/bench_history.py "$@" commits . --commits 30 > bench/out/bench_history.md
echo "done: bench/out/" >&2
