#!/usr/bin/env python3
"""Extract strace's syscall classes (x86_64, i386, x32) from its source tree
into scprof's data file, user/model/trace_classes.txt.
Usage: strace_classes.py STRACE_SOURCE_DIR VERSION > user/model/trace_classes.txt
(the source tree of the strace that the tests compare with: Debian 12 has 6.1)."""
import re, subprocess, sys, os
src, ver = sys.argv[1], sys.argv[2]
FLAGS = {'TD':'desc','TF':'file','TI':'ipc','TN':'network','TP':'process','TS':'signal',
 'TM':'memory','TST':'stat','TLST':'lstat','TFST':'fstat','TSTA':'%stat','TSF':'statfs',
 'TFSF':'fstatfs','TSFA':'%statfs','PU':'pure','TC':'creds','TCL':'clock'}
IGN = {'TRACE_INDIRECT_SUBCALL','NF','MA','SI','SE','CST','TSD','CC','0'}
def table(path):
    drv = ('#define SEN(x) x\n'
           '#include "%s"\n' % path)
    out = subprocess.run(['cpp','-P','-I',os.path.dirname(path),'-I',os.path.join(src,'src/linux/generic'),'-I',os.path.join(src,'src/linux'),'-'],input=drv,capture_output=True,text=True,check=True).stdout
    rows = {}
    m = re.search(r'#define\s+SYS_socket_subcall\s+(\d+)', open(path).read())
    subcall = int(m.group(1)) if m else 1 << 30
    for m in re.finditer(r'\[([^\]]+)\]\s*=\s*\{\s*[^,]+,\s*([^,]+),\s*[^,]+,\s*"([^"]+)"', out):
        nr = eval(m.group(1)); fl = m.group(2).split('|'); name = m.group(3)
        if nr >= subcall: continue  # socketcall/ipc subcalls: not real numbers
        cls = []
        for f in fl:
            f=f.strip()
            if f in FLAGS: cls.append(FLAGS[f])
            elif f not in IGN: raise SystemExit('unknown flag %s' % f)
        rows[nr] = (name, cls)
    return rows
print('# strace %s syscall classes (src/linux/{x86_64,i386,x32}/syscallent.h), one' % ver)
print('# syscall a line: ABI NUMBER NAME CLASS... Classes are written without their')
print('# leading %; strace\'s %%stat and %%statfs are %stat and %statfs. The socketcall and')
print('# ipc subcalls of the 32-bit table are left out (scprof counts the call made).')
print('# Made by tests/tools/strace_classes.py from the strace source; the build turns it')
print('# into a C table (user/model/gen_classes.sh), -e trace=%CLASS reads that.')
for abi, p in (('64','x86_64/syscallent.h'),('32','i386/syscallent.h'),('x32','x32/syscallent.h')):
    for nr,(name,cls) in sorted(table(os.path.join(src,'src/linux',p)).items()):
        print(abi, nr, name, *cls)
