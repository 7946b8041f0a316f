import json, sys
D="documents"; P="projects"
def rf(sp,p): return {"tool":"read-file","args":{"space":sp,"path":p}}
def px(sp,p): return {"tool":"pdf-extract","args":{"space":sp,"path":p}}
def rd(sp,p): return px(sp,p) if p.endswith(".pdf") else rf(sp,p)
def calc(e): return [{"tool":"calculator","args":{"expression":e}}]
def summ(text, **kw): a={"text":text}; a.update(kw); return {"tool":"summarize","args":a}
def ref(i): return "{{steps.s%d.output.text}}"%i
def cmp2(f1,f2): return [rd(*f1), rd(*f2), {"tool":"compare","args":{"a":ref(1),"b":ref(2)}}]
def sumf(f, **kw): return [rd(*f), summ(ref(1), **kw)]
def lst(sp, **kw): a={"space":sp}; a.update(kw); return [{"tool":"list-files","args":a}]
def every(sp, d, reader, **kw):
    a={"space":sp,"dir":d}; a.update(kw)
    r={"tool":reader,"args":{"space":sp,"path":"{{item.path}}"},"foreach":"{{steps.s1.output.files}}"}
    return [{"tool":"list-files","args":a}, r, {"tool":"summarize","args":{"text":"{{item.text}}"},"foreach":"{{steps.s2.output}}"}]
def dele(sp,p): return [{"tool":"delete-file","args":{"space":sp,"path":p}}]
def mcp(t, **a): return [{"tool":t,"args":a}]
out=[]
def c(kind, q, steps=None, choices=None, error=None):
    d={"kind":kind,"q":q}
    if steps: d["steps"]=steps
    if choices: d["choices"]=choices
    if error: d["error"]=error
    out.append(d)
def dump(path):
    with open(path,"w") as f:
        for d in out: f.write(json.dumps(d)+"\n")
