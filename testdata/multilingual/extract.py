import gzip, os, re, json, sys
root = '/tmp/i27deb/x/usr/share/man'
esc = re.compile(r'\\f[BIRP]|\\f\(..|\\f\[[^\]]*\]|\\\(..|\\\[[^\]]*\]|\\[-&e|^%0]|\\s[+-]?\d|\\\*.|\\c|\\\\')
out = open('/tmp/i27m/cjk.jsonl', 'w')
n = 0
for lang in ['ja', 'zh_CN', 'zh_TW']:
    for dp, dn, fn in os.walk(os.path.join(root, lang)):
        for f in sorted(fn):
            p = os.path.join(dp, f)
            if os.path.islink(p) or not f.endswith('.gz'): continue
            try:
                raw = gzip.open(p).read()
            except Exception: continue
            try: txt = raw.decode('utf-8')
            except UnicodeDecodeError: continue
            lines = []
            for l in txt.split('\n'):
                if l.startswith('.\\"') or l.startswith("'\\\"") : continue
                if l.startswith('.') or l.startswith("'"):
                    parts = l.split(None, 1)
                    if parts and parts[0] in ('.SH','.SS','.B','.I','.BR','.IR','.RB','.RI','.BI','.IB','.TP','.IP') and len(parts) > 1:
                        lines.append(parts[1].replace('"', ''))
                    continue
                lines.append(l)
            t = esc.sub('', '\n'.join(lines)).strip()
            if len(t) < 200: continue
            rel = os.path.relpath(p, root)
            out.write(json.dumps({'id': rel, 'text': t}, ensure_ascii=False) + '\n')
            n += 1
print(n)
