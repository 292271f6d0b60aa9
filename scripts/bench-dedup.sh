#!/bin/sh
# bench-dedup.sh: neardup's whole dedup pipeline (dedup.Run: in-memory batch
# path, index over an in-memory store, index over Pebble) and
# ekzhu/minhash-lsh on one generated corpus (1,000-word Zipf documents, ~10%
# planted near-duplicates at exact 5-shingle Jaccard 0.5–0.99), each
# configuration in its own child process with GOMAXPROCS=2.
#
# Usage: scripts/bench-dedup.sh [flags of bench/dedup]
#   scripts/bench-dedup.sh                         # 100k documents, ~5 min on a loaded 2-core machine
#   scripts/bench-dedup.sh -n 1000000 -memstore=false -keep /tmp/corpus1m -out /tmp/bench1m
# The corpus goes to a temporary directory removed at exit unless -keep DIR
# is given (100k documents ≈ 0.6 GB, 1M ≈ 6.3 GB of JSONL; -compress zstd
# makes it smaller). -out DIR writes results.json and results.md.
set -eu
cd "$(dirname "$0")/../bench"
echo "# $(go version)"
echo "# $(uname -srm)"
if [ -r /proc/cpuinfo ]; then
	echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(grep -c ^processor /proc/cpuinfo) logical cpus"
fi
if [ -r /proc/loadavg ]; then
	echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine adds noise; CPU seconds are reported too)"
fi
bin=$(mktemp /tmp/neardup-bench-dedup.XXXXXX)
trap 'rm -f "$bin"' EXIT
go build -o "$bin" ./dedup
"$bin" "$@"
