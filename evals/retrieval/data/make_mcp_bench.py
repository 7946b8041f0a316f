#!/usr/bin/env python3
"""Builds the MCP development set from MCP-Bench (Accenture, arXiv 2508.20453).

Queries: MCP-Bench's 104 tasks (tasks/mcpbench_tasks_{single,multi_2server,
multi_3server}_runner_format.json of github.com/Accenture/mcp-bench). Each task
has a `fuzzy_description`, the request as a person writes it (no tool names,
no steps), which is the query, and a `task_description` plus
`dependency_analysis`, the concrete plan, which names the tools. The gold of a
query is every tool of the task's servers that the plan names:
"Server:tool", "tool(" or the tool's name as a whole word. Names that are a
single lower-case word ("search", "fetch", "rank", "sum") count only in the
first two forms, since as plain words they are as often English as tool
names. A task whose plan names no tool is left out.

Tools: the 257 tools of MCP-Bench's 28 servers as the benchmark's own
collector (utils/collect_mcp_info.py) listed them from the running servers,
committed as mcp_servers_info.json in the public fork
github.com/xuhaike/mcp-bench (its task files are byte-identical to
upstream's). Each becomes {name, description, inputSchema, server}.

Split: tasks are grouped by server combination (MCP-Bench writes two tasks
per combination, which share their tools and wording); within each of the
three task files the combinations are ordered by a salted SHA-256 of their
name and dealt alternately to `dev` and `test`, so both halves hold single-,
two- and three-server tasks. `dev` is for choosing and tuning; `test` is
reported and never tuned on. The tool pool is shared by both halves.

usage: make_mcp_bench.py TASKS_DIR MCP_SERVERS_INFO.json OUTDIR
  TASKS_DIR   a directory holding MCP-Bench's three task files
  OUTDIR      receives mcp_bench_tools.jsonl.gz,
              mcp_bench_dev_queries.jsonl.gz, mcp_bench_test_queries.jsonl.gz
"""
import gzip, hashlib, io, json, re, sys

SALT = "airs-mcp-bench-split-1"
FILES = ["single", "multi_2server", "multi_3server"]


def write_gz(path, lines):
    # mtime 0: the same input writes the same bytes.
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as f:
        for rec in lines:
            f.write((json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8"))
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def named(plan, server, tool):
    if server + ":" + tool in plan:
        return True
    if re.search(r"(?<![\w-])" + re.escape(tool) + r"\s*\(", plan):
        return True
    if re.fullmatch(r"[a-z]+", tool):
        return False
    return re.search(r"(?<![\w-])" + re.escape(tool) + r"(?![\w-])", plan) is not None


def main():
    tasks_dir, info_path, out = sys.argv[1:4]
    servers = json.load(open(info_path, encoding="utf-8"))["servers"]
    tools = []
    for sname in sorted(servers):
        for tname in sorted(servers[sname]["tools"]):
            t = servers[sname]["tools"][tname]
            tools.append({"name": tname, "description": (t.get("description") or "").strip(),
                          "inputSchema": t.get("input_schema") or {"type": "object"}, "server": sname})
    write_gz(f"{out}/mcp_bench_tools.jsonl.gz", tools)

    halves = {"dev": [], "test": []}
    dropped = []
    for fname in FILES:
        path = f"{tasks_dir}/mcpbench_tasks_{fname}_runner_format.json"
        groups = {}
        for st in json.load(open(path, encoding="utf-8"))["server_tasks"]:
            snames = st.get("servers") or [st["server_name"]]
            for t in st["tasks"]:
                groups.setdefault(st["server_name"], []).append((snames, t))
        order = sorted(groups, key=lambda g: hashlib.sha256((SALT + "\0" + g).encode()).hexdigest())
        for i, g in enumerate(order):
            half = "dev" if i % 2 == 0 else "test"
            for snames, t in groups[g]:
                plan = t["task_description"] + "\n" + t["dependency_analysis"]
                gold = [s + "/" + n for s in snames for n in sorted(servers[s]["tools"]) if named(plan, s, n)]
                if not gold:
                    dropped.append(t["task_id"])
                    continue
                halves[half].append({"id": t["task_id"], "query": t["fuzzy_description"].strip(),
                                     "tools": gold, "servers": snames, "kind": fname})
    for half, recs in halves.items():
        recs.sort(key=lambda r: r["id"])
        write_gz(f"{out}/mcp_bench_{half}_queries.jsonl.gz", recs)
    print(f"{len(tools)} tools of {len(servers)} servers; dev {len(halves['dev'])} queries, "
          f"test {len(halves['test'])}; left out (plan names no tool): {', '.join(dropped) or 'none'}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
