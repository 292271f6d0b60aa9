import json, subprocess, re
docs = {json.loads(l)['id']: json.loads(l)['text'] for l in open('cjk.jsonl')}
out = []
def add(i, t): out.append({'id': i, 'text': t})
# real near-duplicate pages (pairs neardup and the reference both find)
for i in ['ja/man8/grub-bios-setup.8.gz','ja/man8/grub-sparc64-setup.8.gz','ja/man1/base32.1.gz','ja/man1/base64.1.gz',
          'zh_CN/man1/sha256sum.1.gz','zh_CN/man1/sha384sum.1.gz']:
    add(i, docs[i])
# unrelated pages
for i in ['ja/man5/AppleVolumes.default.5.gz', 'zh_CN/man1/svn.1.gz', 'zh_TW/man1/sha256sum.1.gz']:
    add(i, docs[i])
# a paragraph and the same with one word changed
zhid = max((i for i in docs if i.startswith('zh_CN/')), key=lambda i: len(re.findall('[\u4e00-\u9fff]', docs[i])))
zh = docs[zhid]
para = zh[len(zh)//2:len(zh)//2+800]
print('zh para from', zhid)
add('edit/zh-para', para)
w = re.search(r'[\u4e00-\u9fff]{2}', para[len(para)//2:]).group(0)
add('edit/zh-para-one-word', para[:len(para)//2] + para[len(para)//2:].replace(w, '文件', 1))
jaid = max((i for i in docs if i.startswith('ja/')), key=lambda i: len(re.findall('[\u3040-\u30ff]', docs[i])))
ja = docs[jaid]
para = ja[len(ja)//2:len(ja)//2+800]
print('ja para from', jaid)
add('edit/ja-para', para)
w = re.search(r'[\u4e00-\u9fff]{2}', para[len(para)//2:]).group(0)
add('edit/ja-para-one-word', para[:len(para)//2] + para[len(para)//2:].replace(w, '設定', 1))
# Thai: gettext translations of dpkg and apt (th)
def th(m, n):
    po = subprocess.run(['msgunfmt', '/usr/share/locale/th/LC_MESSAGES/%s.mo' % m], capture_output=True, text=True).stdout
    strs = re.findall(r'msgstr "((?:[^"\\]|\\.)*)"', po)
    strs = [s.encode().decode('unicode_escape').encode('latin1').decode('utf-8') for s in strs if re.search('[\u0e00-\u0e7f]', s)]
    strs = [s for s in strs if len(s) > 40][:n]
    return '\n'.join(strs)
a = th('dpkg', 40)
add('th/dpkg', a)
h = len(a)//2
assert 'แฟ้ม' in a[h:]
add('th/dpkg-one-word', a[:h] + a[h:].replace('แฟ้ม', 'ไฟล์', 1))
add('th/apt', th('apt', 40))
with open('/work/wt/i27/testdata/multilingual/docs.jsonl', 'w') as f:
    for d in out: f.write(json.dumps(d, ensure_ascii=False) + '\n')
print(len(out))
