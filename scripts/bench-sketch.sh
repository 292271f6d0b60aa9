#!/bin/sh
# bench-sketch.sh: neardup's samplers against ekzhu/minhash-lsh and
# dgryski/go-minhash on one generated corpus (Zipf words, 1,000-word
# documents, near-duplicate pairs at exact J ≈ 0.5, 0.8, 0.9, 0.95), one
# core, interleaved repetitions. Takes a few minutes on an idle machine.
#
# Usage: scripts/bench-sketch.sh [flags of bench/sketch, e.g. -k 256 -json]
# Defaults here: -docs 8000 -reps 7 (override by passing them again).
set -eu
cd "$(dirname "$0")/../bench"
echo "# $(go version)"
echo "# $(uname -srm)"
if [ -r /proc/cpuinfo ]; then
	echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(grep -c ^processor /proc/cpuinfo) logical cpus"
fi
if [ -r /proc/loadavg ]; then
	echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine adds noise)"
fi
echo "# go run ./sketch -docs 8000 -reps 7 $*"
go build -o /tmp/neardup-bench-sketch.$$ ./sketch
trap 'rm -f /tmp/neardup-bench-sketch.$$' EXIT
/tmp/neardup-bench-sketch.$$ -docs 8000 -reps 7 "$@"
