#!/bin/sh
# short-corpus.sh DIR: a corpus of real short documents for the exactness
# measurement of issue 30 (bench/shortdocs): the Go toolchain's own source
# files under 2 KB (outside testdata/) and the Debian copyright files under
# 2 KB installed on this machine, one document per file, copied into DIR
# (which must not exist). The files stay under their own licences; the
# corpus is built where it is measured and not shipped.
set -eu
dir=${1:?usage: short-corpus.sh DIR}
[ ! -e "$dir" ] || { echo "short-corpus.sh: $dir exists" >&2; exit 2; }
mkdir -p "$dir/go" "$dir/deb"
root=$(go env GOROOT)
find "$root/src" -name '*.go' -size -2048c -type f -not -path '*/testdata/*' | while read -r f; do
	n=${f#"$root/src/"}
	cp "$f" "$dir/go/$(echo "$n" | tr / _)"
done
for f in /usr/share/doc/*/copyright; do
	[ -f "$f" ] && [ "$(stat -c %s "$f")" -lt 2048 ] && cp "$f" "$dir/deb/$(basename "$(dirname "$f")").copyright"
done
echo "$(find "$dir" -type f | wc -l) documents in $dir"
