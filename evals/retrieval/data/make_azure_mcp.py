#!/usr/bin/env python3
"""Builds the MCP development set from Azure MCP's tool-description evaluator
(github.com/microsoft/mcp, eng/tools/ToolDescriptionEvaluator: tools.json and
prompts.json, MIT): each tool becomes an MCP-style tool record (name, description,
inputSchema with the tool's own options, server "azure"), each prompt a query
whose gold is the tool it was written for.

usage: make_azure_mcp.py TOOLS.json PROMPTS.json OUTDIR
"""
import gzip, json, sys

COMMON = {"tenant", "auth-method", "retry-delay", "retry-max-delay", "retry-max-retries",
          "retry-mode", "retry-network-timeout", "subscription"}

tools_path, prompts_path, out = sys.argv[1:4]
tools = json.load(open(tools_path, encoding="utf-8-sig"))["results"]
prompts = json.load(open(prompts_path, encoding="utf-8-sig"))
names = set()
with gzip.open(f"{out}/azure_mcp_tools.jsonl.gz", "wt", encoding="utf-8") as f:
    for t in sorted(tools, key=lambda t: t["command"]):
        name = "_".join(t["command"].split())
        if name in names:
            continue
        names.add(name)
        props = {}
        for o in t.get("option") or []:
            n = o["name"].lstrip("-")
            if n in COMMON:
                continue
            props[n] = {"type": o.get("type") or "string", "description": o.get("description", "")}
        rec = {"name": name, "description": " ".join(t["description"].split()),
               "inputSchema": {"type": "object", "properties": props}, "server": "azure"}
        f.write(json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n")
n = 0
with gzip.open(f"{out}/azure_mcp_queries.jsonl.gz", "wt", encoding="utf-8") as f:
    for name in sorted(prompts):
        if name not in names:
            continue
        for i, p in enumerate(prompts[name]):
            f.write(json.dumps({"id": f"{name}#{i}", "query": p, "tools": ["azure/" + name]}, ensure_ascii=False) + "\n")
            n += 1
print(len(names), "tools,", n, "queries", file=sys.stderr)
