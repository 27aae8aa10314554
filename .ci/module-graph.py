"""Checks the console's module graph (ui/src): no import cycle between
sibling modules, and no command module importing another command.
A child module using its parent's items is containment and allowed."""
import os,re,sys
root=sys.argv[1]
mods={}
for d,_,fs in os.walk(root):
    for f in fs:
        if f.endswith('.rs'):
            p=os.path.join(d,f); rel=os.path.relpath(p,root)[:-3].split(os.sep)
            if rel[-1]=='mod': rel=rel[:-1]
            if rel in (['lib'],['main']): rel=[]
            mods[tuple(rel)]=p
def resolve(path):
    # longest prefix that is a module
    for k in range(len(path),-1,-1):
        if tuple(path[:k]) in mods: return tuple(path[:k])
edges={}
for m,p in mods.items():
    s=open(p).read()
    s=re.sub(r'//[^\n]*','',s)
    targets=set()
    for x in re.findall(r'crate((?:::\w+)+)',s):
        targets.add(resolve(x.strip(':').split('::')))
    for x in re.findall(r'\bsuper((?:::\w+)+)',s):
        base=list(m[:-1]) if not p.endswith('mod.rs') else list(m[:-1])
        targets.add(resolve(base+x.strip(':').split('::')))
    # submodule use from mod.rs: `use child::...` or child::fn(
    if p.endswith('mod.rs') or m==():
        for x in re.findall(r'(?<![\w:])(\w+)::\w+',s):
            if tuple(list(m)+[x]) in mods: targets.add(tuple(list(m)+[x]))
    targets.discard(m); targets.discard(None)
    # A child naming its own parent (the module that declares it) is
    # containment, not an import between peers.
    targets={t for t in targets if not (len(t)<len(m) and m[:len(t)]==t)}
    # ignore edges to ancestors that are only module containers? keep all
    edges[m]=targets
# find cycles with tarjan
idx={};low={};st=[];on=set();res=[];c=[0]
def sc(v):
    idx[v]=low[v]=c[0];c[0]+=1;st.append(v);on.add(v)
    for w in edges.get(v,()):
        if w not in idx: sc(w);low[v]=min(low[v],low[w])
        elif w in on: low[v]=min(low[v],idx[w])
    if low[v]==idx[v]:
        comp=[]
        while True:
            w=st.pop();on.discard(w);comp.append(w)
            if w==v:break
        if len(comp)>1: res.append(comp)
sys.setrecursionlimit(10000)
for v in list(edges):
    if v not in idx: sc(v)
for comp in res: print('CYCLE:', [ '::'.join(x) for x in comp])
cmds=[m for m in mods if len(m)==2 and m[0]=='commands']
for m in cmds:
    for t in edges[m]:
        if t in cmds and t!=m: print('COMMAND IMPORTS COMMAND:', m, t)
bad=len(res)+sum(1 for m in cmds for t in edges[m] if t in cmds and t!=m)
print(len(mods),'modules,',len(res),'import cycles')
sys.exit(1 if bad else 0)
