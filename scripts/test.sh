#!/usr/bin/env bash
# test.sh: the README's test command. It runs every test of every module
# (the root module, bench/ and beam/), statistical proofs, fault injection
# and the tests against real servers included.
#
# The tests start the servers they need themselves, on free loopback ports
# in temporary directories (redis-server standalone and a 3-node Redis
# Cluster, headless Chromium for the HTML report), and stop them at the
# end. This script installs those programs from Debian's packages when they
# are missing, so that a fresh machine needs nothing installed by hand.
#
# Usage: scripts/test.sh [go test flags, e.g. -count=1 -run Foo]
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 &&
	! command -v google-chrome >/dev/null 2>&1 && [ -z "${NEARDUP_CHROMIUM:-}" ]; then
	missing+=(chromium)
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "== installing ${missing[*]} (Debian packages)"
	scripts/apt-install.sh "${missing[@]}" fonts-liberation
	# The Debian package starts a system redis-server on port 6379; the tests
	# start their own on free ports and need none.
	sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	if command -v systemctl >/dev/null 2>&1; then $sudo systemctl stop redis-server >/dev/null 2>&1 || true; fi
fi

status=0
echo "== go test ./... (root module)"
go test -timeout 20m "$@" ./... || status=1
for m in bench beam; do
	if [ -f "$m/go.mod" ]; then
		echo "== go test ./... ($m module)"
		(cd "$m" && go test -timeout 20m "$@" ./...) || status=1
	fi
done
exit $status
