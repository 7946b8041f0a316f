#!/usr/bin/env python3
"""Builds the extra training sets of `airs train retrieval`: public tool
collections with requests written for them, so that the tool model sees
thousands of distinct tools besides MetaTool's and StableToolBench's.

Each set becomes two gzipped JSON Lines files in OUTDIR, in the tools/queries
format `airs eval retrieval` reads (tools: {name, description, parameters
(JSON schema), server}; queries: {id, query, tools}):

  sealtools_train_tools / _queries    Seal-Tools (github.com/fairyshine/Seal-Tools,
                                      Apache-2.0): tool.jsonl (every tool) and the
                                      requests of dev.jsonl, test_in_domain.jsonl,
                                      test_out_domain.jsonl (gold: the APIs called).
  toolalpaca_train_tools / _queries   ToolAlpaca (github.com/tangqiaoyu/ToolAlpaca,
                                      Apache-2.0): data/eval_real.json and
                                      eval_simulated.json (each API's functions;
                                      gold: the functions of the golden answer).
  apibench_train_tools / _queries     Gorilla APIBench (github.com/ShishirPatil/gorilla,
                                      Apache-2.0): data/apibench/*_eval.json and
                                      torchhub_train.json (gold: the API called).

Nothing here is held out of anything: these sets are training data only; the
training (evals/retrieval/train.go) drops every tool of them that looks like a
held-out MetaTool or StableToolBench tool, and every request that repeats one
of their requests.

usage: make_extra_training.py SEAL_TOOLS_GITDIR TOOLALPACA_GITDIR GORILLA_GITDIR OUTDIR
(bare git directories; files are read from HEAD, whose commit is printed.)
"""
import gzip, json, re, subprocess, sys


def show(gitdir, path):
    return subprocess.run(["git", "-C", gitdir, "show", "HEAD:" + path],
                          check=True, capture_output=True).stdout.decode("utf-8")


def head(gitdir):
    return subprocess.run(["git", "-C", gitdir, "rev-parse", "HEAD"],
                          check=True, capture_output=True, text=True).stdout.strip()


def write(out, name, tools, queries):
    with gzip.GzipFile(f"{out}/{name}_train_tools.jsonl.gz", "wb", mtime=0) as f:
        for t in sorted(tools, key=lambda t: (t.get("server", ""), t["name"])):
            f.write((json.dumps(t, ensure_ascii=False, sort_keys=True) + "\n").encode())
    with gzip.GzipFile(f"{out}/{name}_train_queries.jsonl.gz", "wb", mtime=0) as f:
        for q in queries:
            f.write((json.dumps(q, ensure_ascii=False, sort_keys=True) + "\n").encode())
    print(f"{name}: {len(tools)} tools, {len(queries)} queries", file=sys.stderr)


def schema(props, required=()):
    return {"type": "object", "properties": props, "required": list(required)}


def seal_tools(gitdir, out):
    tools, names = [], set()
    for line in show(gitdir, "Seal-Tools_Dataset/tool.jsonl").splitlines():
        t = json.loads(line)
        if t["api_name"] in names:
            continue
        names.add(t["api_name"])
        props = {k: {"type": v.get("type", "string"), "description": v.get("description", "")}
                 for k, v in (t.get("parameters") or {}).items()}
        tools.append({"name": t["api_name"], "description": " ".join(t["api_description"].split()),
                      "parameters": schema(props, t.get("required") or []),
                      "server": t.get("field", "").split("/")[0]})
    server = {t["name"]: t["server"] for t in tools}
    queries = []
    for part in ("dev", "test_in_domain", "test_out_domain"):
        for line in show(gitdir, f"Seal-Tools_Dataset/{part}.jsonl").splitlines():
            r = json.loads(line)
            gold = sorted({c["api"] for c in r["calling"] if c["api"] in names})
            if gold and r["query"].strip():
                queries.append({"id": r["id"], "query": r["query"],
                                "tools": [f"{server[g]}/{g}" if server[g] else g for g in gold]})
    write(out, "sealtools", tools, queries)


def tool_alpaca(gitdir, out):
    tools, queries = [], []
    for part in ("eval_real", "eval_simulated"):
        for api in json.loads(show(gitdir, f"data/{part}.json")):
            server = api["Name"]
            funcs = {k: v for k, v in api["Function_Description"].items() if k != "components" and v}
            for name, desc in funcs.items():
                text, _, rest = desc.partition("\nParameters: ")
                params, _, _ = rest.partition("\nOutput:")
                props = {}
                try:
                    for k, v in (json.loads(params) if params.strip() else {}).items():
                        props[k] = {"type": "string", "description": str(v)}
                except json.JSONDecodeError:
                    pass
                tools.append({"name": name, "description": " ".join(text.split()),
                              "parameters": schema(props), "server": server})
            for i, (q, ans) in enumerate(zip(api["Instructions"], api["Golden_Answers"])):
                gold = sorted({a["Action"] for a in ans if a.get("Action") in funcs})
                if gold and q.strip():
                    queries.append({"id": f"{part}/{server}#{i}", "query": q,
                                    "tools": [f"{server}/{g}" for g in gold]})
    write(out, "toolalpaca", tools, queries)


def api_bench(gitdir, out):
    tools, queries, seen = {}, [], set()
    instr = re.compile(r"###Instruction:\s*(.*?)\s*###Output", re.S)
    for part in ("huggingface_eval", "tensorflow_eval", "torchhub_eval", "torchhub_train"):
        for i, line in enumerate(show(gitdir, f"data/apibench/{part}.json").splitlines()):
            if not line.strip():
                continue
            r = json.loads(line)
            a = r.get("api_data") or {}
            name = a.get("api_name") or ""
            m = instr.search(r.get("code", ""))
            if not name or not m:
                continue
            server = a.get("framework") or r.get("provider") or ""
            key = f"{server}/{name}"
            if key not in tools:
                desc = " ".join(f"{a.get('domain', '')}. {a.get('functionality', '')}. {a.get('description', '')}".split())
                args = a.get("api_arguments")
                props = {}
                if isinstance(args, dict):
                    props = {k: {"type": "string", "description": str(v)[:200]} for k, v in args.items()}
                elif isinstance(args, list):
                    props = {str(k): {"type": "string", "description": ""} for k in args}
                tools[key] = {"name": name, "description": desc[:1000], "parameters": schema(props), "server": server}
            q = " ".join(m.group(1).split())
            if (q, key) in seen:
                continue
            seen.add((q, key))
            queries.append({"id": f"{part}#{i}", "query": q, "tools": [key]})
    write(out, "apibench", list(tools.values()), queries)


if __name__ == "__main__":
    seal, alpaca, gorilla, out = sys.argv[1:5]
    for name, g in (("Seal-Tools", seal), ("ToolAlpaca", alpaca), ("gorilla", gorilla)):
        print(f"{name} at commit {head(g)}", file=sys.stderr)
    seal_tools(seal, out)
    tool_alpaca(alpaca, out)
    api_bench(gorilla, out)
