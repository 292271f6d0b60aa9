import gzip, glob, hashlib, json, re, sys, os
# Usage: mkchangelog.py MAXENTRIES > out.jsonl
maxe = int(sys.argv[1])
head = re.compile(r'^(\S+) \(([^)]+)\) [^;]*; ')
seen = set()
n = 0
for path in sorted(glob.glob('/usr/share/doc/*/changelog.Debian.gz')):
    try:
        raw = gzip.open(path).read()
    except Exception:
        continue
    h = hashlib.sha256(raw).digest()
    if h in seen:
        continue
    seen.add(h)
    text = raw.decode('utf-8', 'replace')
    pkg = path.split('/')[4]
    entries, cur = [], None
    for line in text.split('\n'):
        m = head.match(line)
        if m:
            cur = [m.group(1) + '/' + m.group(2), [line]]
            entries.append(cur)
        elif cur is not None:
            cur[1].append(line)
    for e in entries[:maxe]:
        body = '\n'.join(e[1]).strip() + '\n'
        print(json.dumps({"id": pkg + ':' + e[0], "text": body}, ensure_ascii=False))
        n += 1
print(n, len(seen), file=sys.stderr)
