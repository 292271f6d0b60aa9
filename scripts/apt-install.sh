#!/usr/bin/env bash
# apt-install.sh: install Debian packages (as root, or through sudo),
# without questions or recommended extras. scripts/test.sh and .ci/run
# install what the tests need with it on a fresh machine.
#
# Usage: scripts/apt-install.sh PACKAGE...
set -euo pipefail
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
