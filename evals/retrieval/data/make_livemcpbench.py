#!/usr/bin/env python3
"""Builds the LiveMCPBench retrieval set: FINAL MEASUREMENT ONLY.

Neither train nor tune anything on these tools or tasks (no fusion weights,
no thresholds, no model choice): they are kept to measure, once, what was
chosen on the MCP-Bench development half (mcp_bench_dev_*).

Queries: the 95 tasks of LiveMCPBench (github.com/icip-cas/LiveMCPBench,
annotated_data/all_annotations.json, Apache-2.0). Each task's `Question` is
the query; its annotator listed the tools the task needs
("Annotator Metadata" / "Tools", one name a line), which are the gold,
resolved against the benchmark's 527 tools:

- a name held by one tool is that tool;
- a name held by several servers' tools (write_file, list_directory, fetch,
  search_papers, read_file, add_table) keeps those whose server also holds
  another tool of the same task; when none does, every tool of that name is
  gold (the annotation does not say which server);
- four names the annotators wrote under another name than the tool list's
  are mapped (ALIASES); a name with no tool and no alias is dropped from
  that task's gold and reported, and a task left with no gold is left out.

Tools: LiveMCPBench's tool list (one JSON document: servers with their
tools, as ../shared/data/tools/livemcpbench_tools.json.gz holds it), one
record per tool {name, description, inputSchema, server}; the pool is these
527 tools alone, as in LiveMCPBench's own retrieval setting.

usage: make_livemcpbench.py ALL_ANNOTATIONS.json LIVEMCPBENCH_TOOLS.json[.gz] OUTDIR
  OUTDIR receives livemcpbench_tools.jsonl.gz and livemcpbench_queries.jsonl.gz
"""
import gzip, io, json, re, sys

# Annotated name -> the tool it names in the tool list.
ALIASES = {
    "trial_references": "biomcp/trial_references_getter",
    "ddg-search": "duckduckgo-search/duckduckgo_web_search",
    "get_maven_latest_version": "maven-deps-server/get_latest_release",
    # Desktop Commander's command runner, named start_process in the listed version.
    "execute_command": "desktop-commander/start_process",
}


def write_gz(path, lines):
    # mtime 0: the same input writes the same bytes.
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as f:
        for rec in lines:
            f.write((json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8"))
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def main():
    ann_path, tools_path, out = sys.argv[1:4]
    tools, by_name, ids = [], {}, set()
    for srv in load_json(tools_path):
        for key in sorted(srv["tools"]):
            for t in srv["tools"][key]["tools"]:
                tid = key + "/" + t["name"]
                if tid in ids:
                    continue
                ids.add(tid)
                tools.append({"name": t["name"], "description": (t.get("description") or "").strip(),
                              "inputSchema": t.get("inputSchema") or {"type": "object"}, "server": key})
                by_name.setdefault(t["name"].lower(), []).append(tid)
    tools.sort(key=lambda t: (t["server"], t["name"]))
    write_gz(f"{out}/livemcpbench_tools.jsonl.gz", tools)

    queries, unresolved, dropped, ambiguous = [], [], [], 0
    for a in load_json(ann_path):
        meta = a["Annotator Metadata"]
        names = [re.sub(r"^\s*\d+\s*[.)]\s*", "", l).strip().strip("`") for l in meta["Tools"].splitlines()]
        names = [n for n in names if n]
        cands = []
        for n in names:
            if n in ALIASES:
                cands.append([ALIASES[n]])
            elif n.lower() in by_name:
                cands.append(by_name[n.lower()])
            else:
                unresolved.append(f"{a['task_id'][:8]}:{n}")
        servers = {c[0].split("/")[0] for c in cands if len(c) == 1}
        gold = []
        for c in cands:
            if len(c) > 1:
                ambiguous += 1
                same = [t for t in c if t.split("/")[0] in servers]
                c = same or c
            for t in c:
                if t not in gold:
                    gold.append(t)
        if not gold:
            dropped.append(a["task_id"])
            continue
        queries.append({"id": a["task_id"], "query": a["Question"].strip(), "tools": gold,
                        "category": a.get("category", ""), "final_measurement_only": True})
    queries.sort(key=lambda q: q["id"])
    write_gz(f"{out}/livemcpbench_queries.jsonl.gz", queries)
    print(f"{len(tools)} tools; {len(queries)} queries; names held by several tools: {ambiguous}; "
          f"names without a tool: {', '.join(unresolved) or 'none'}; tasks left out: {', '.join(dropped) or 'none'}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
