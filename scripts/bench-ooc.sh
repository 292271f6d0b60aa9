#!/bin/sh
# bench-ooc.sh: the goals of issue 29 (--memory is a bound at every
# setting, verification exact at any scale), each row one run of the real
# command `neardup dedup - --out DIR` on a generated corpus streamed on
# standard input (bench/ooc -neardup: the corpus never touches the disk;
# the child's CPU seconds and peak RSS from its rusage, recall of the
# planted pairs, precision of the reported near pairs).
#
# Usage: scripts/bench-ooc.sh [ROW...]   (default: default100k default1m m96 sweep)
#   default100k  100,000 × 300 words, default settings
#   default1m    1,000,000 × 1,000 words, default settings (about 6.5 GB streamed)
#   m96          300,000 × 200 words, --memory 96MiB
#   sweep        300,000 × 200 words at --memory 96, 192, 384, 768 MiB and 1.5 GiB
#   10m          10,000,000 × 200 words, --memory 4GiB (about 15 GB streamed; the
#                output directory peaks at about 61 GiB: plan 65 GB free)
# Each row prints bench/ooc's Markdown table; OUT=DIR also keeps each
# row's JSON in DIR.
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/neardup-bench-ooc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/neardup" ./cmd/neardup
(cd bench && go build -o "$tmp/ooc" ./ooc)
echo "# $(go version); $(uname -srm); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
row() {
	name=$1
	shift
	json=""
	if [ -n "${OUT:-}" ]; then
		mkdir -p "$OUT"
		json="-out $OUT/$name.json"
	fi
	# shellcheck disable=SC2086
	"$tmp/ooc" -neardup "$tmp/neardup" -tmp "$tmp" $json "$@" 2>"$tmp/$name.log" || {
		tail -20 "$tmp/$name.log" >&2
		return 1
	}
}
[ $# -gt 0 ] || set -- default100k default1m m96 sweep
for r in "$@"; do
	case $r in
	default100k) row default100k -n 100000 -words 300 -memory-mib 0 ;;
	default1m) row default1m -n 1000000 -words 1000 -memory-mib 0 ;;
	m96) row m96 -n 300000 -words 200 -memory-mib 96 ;;
	sweep) for m in 96 192 384 768 1536; do row "sweep$m" -n 300000 -words 200 -memory-mib $m; done ;;
	10m) row 10m -n 10000000 -words 200 -memory-mib 4096 ;;
	*) echo "bench-ooc.sh: unknown row $r" >&2; exit 2 ;;
	esac
done
