#!/usr/bin/env bash
# journal-30k.sh: issue 30's measurement of the Redis journal. Starts a
# redis-server on a free 127.0.0.1 port (data in a temporary directory),
# one 'neardup serve' on it, adds 30,000 generated documents (40-200 words
# drawn from the words of testdata/changelogs, one JSONL line each) with
# 'neardup index add --server' (batches of 256), prints the journal's size
# (XLEN and MEMORY USAGE of PREFIX:j, and /v1/stats) right after and 5 s
# later, then starts a second server and queries every document through
# it. Everything is stopped and removed at the end. Needs redis-server,
# redis-cli, curl and python3; takes about a minute on an idle machine.
#
# Usage: scripts/journal-30k.sh [DOCS]   (DOCS: 30000 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-30000}
dir=$(mktemp -d /tmp/neardup-journal.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
go build -o "$dir/neardup" ./cmd/neardup
nd=$dir/neardup
python3 - "$n" "$dir/docs.jsonl" <<'PY'
import gzip, json, random, re, sys
random.seed(30)
words = []
for line in gzip.open('testdata/changelogs/entries.jsonl.gz', 'rt'):
    words += re.findall(r"[a-z]+", json.loads(line).get('text', '').lower())
with open(sys.argv[2], 'w') as f:
    for i in range(int(sys.argv[1])):
        f.write(json.dumps({"id": "d%06d" % i, "text": ' '.join(random.choice(words) for _ in range(random.randint(40, 200)))}) + "\n")
PY
rp=$(free_port)
mkdir "$dir/redis"
redis-server --port "$rp" --bind 127.0.0.1 --dir "$dir/redis" --save '' --appendonly no >"$dir/redis.log" 2>&1 &
pids+=($!)
until redis-cli -p "$rp" PING >/dev/null 2>&1; do sleep 0.2; done
url="redis://127.0.0.1:$rp/0?prefix=jt"
serve() { # serve PORT: a server on url, waited for
	"$nd" serve --redis "$url" --addr "127.0.0.1:$1" >"$dir/serve-$1.log" 2>&1 &
	pids+=($!)
	until curl -sf "http://127.0.0.1:$1/v1/stats" >/dev/null; do sleep 0.2; done
}
journal() { echo "journal: $(redis-cli -p "$rp" XLEN jt:j) entries, $(redis-cli -p "$rp" MEMORY USAGE jt:j) bytes (redis MEMORY USAGE)"; }
p1=$(free_port)
serve "$p1"
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$nd" index add -q --server "http://127.0.0.1:$p1" "$dir/docs.jsonl"
echo -n "right after the adds: "; journal
sleep 5
echo -n "5 s later: "; journal
echo "/v1/stats of the server that added them: $(curl -s "http://127.0.0.1:$p1/v1/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["journal"])')"
p2=$(free_port)
serve "$p2"
"$nd" query --server "http://127.0.0.1:$p2" "$dir/docs.jsonl" >"$dir/answers.jsonl"
python3 - "$dir/answers.jsonl" <<'PY'
import json, sys
n = found = 0
for line in open(sys.argv[1]):
    r = json.loads(line); n += 1
    found += any(m['id'] == r['id'] for m in r['matches'])
print(f"a server started afterwards finds {found} of {n} documents (each queried)")
PY
