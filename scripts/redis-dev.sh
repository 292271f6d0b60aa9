#!/usr/bin/env bash
# redis-dev.sh: start a standalone redis-server and a 3-master Redis Cluster
# on free 127.0.0.1 ports, each with "appendonly yes" and "appendfsync
# always" (durable: what store/redis reports as Capabilities().Durable),
# data in a temporary directory; print their URLs for
# `neardup serve --redis URL` or bench/serve; stop them all and remove the
# directory on Ctrl-C or when the script is killed.
#
# The tests do not need this script: they start their own servers
# (store/redis/redistest). It needs Debian's redis-server package (which
# provides redis-cli too): apt-get install -y redis-server.
#
# Usage: scripts/redis-dev.sh
set -euo pipefail
command -v redis-server >/dev/null || { echo "redis-server not found: install Debian's redis-server (scripts/test.sh does)" >&2; exit 1; }
dir=$(mktemp -d /tmp/neardup-redis-dev.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM

# free_port prints a port free on 127.0.0.1 (and port+10000 for a cluster
# bus when $1 = cluster).
free_port() {
	python3 - "$1" <<'PY'
import socket, sys
while True:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]
    if sys.argv[1] != "cluster":
        s.close(); print(p); break
    if p + 10000 < 65536:
        try:
            b = socket.socket(); b.bind(("127.0.0.1", p + 10000)); b.close(); s.close(); print(p); break
        except OSError:
            pass
    s.close()
PY
}

start() { # start NAME PORT [extra args...]
	local name=$1 port=$2; shift 2
	mkdir -p "$dir/$name"
	redis-server --bind 127.0.0.1 --port "$port" --dir "$dir/$name" --daemonize no --save "" \
		--appendonly yes --appendfsync always --logfile redis.log "$@" &
	pids+=($!)
	for _ in $(seq 100); do
		redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	echo "redis-server on $port did not start; see $dir/$name/redis.log" >&2
	exit 1
}

p=$(free_port standalone)
start standalone "$p"
echo "standalone: redis://127.0.0.1:$p"

nodes=()
for i in 0 1 2; do
	q=$(free_port cluster)
	start "node$i" "$q" --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 5000
	nodes+=("127.0.0.1:$q")
done
redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$dir/cluster-create.log" 2>&1 ||
	{ cat "$dir/cluster-create.log" >&2; exit 1; }
until redis-cli -p "${nodes[0]##*:}" cluster info | grep -q cluster_state:ok; do sleep 0.1; done
echo "cluster:    redis+cluster://$(IFS=,; echo "${nodes[*]}")"
echo "data in $dir; Ctrl-C stops the servers and removes it"
wait
