#!/usr/bin/env python3
"""Record anomaly-gate traces from a live `airs serve`.

Eight agents with their own habits call the built-in tools over a space of
real files (this repository) through HTTP, in sessions with pauses, for
--train-minutes; the script then runs `airs guard train` (the server loads
the model within seconds) and records --test-minutes more of the same
traffic with anomalies injected: bursts at 20x an agent's rate, tools other
agents use, 100x payloads, folders the agent never touched. Every call is
one trace line ({"time","agent","tool","args_bytes","label"}, "args" when
under 1 KiB, and the HTTP status the live server answered), written to
DIR/train.jsonl and DIR/test.jsonl for `airs eval guard --train --test`.

Usage: scripts/guard-trace.sh DIR [TRAIN_MINUTES] [TEST_MINUTES]
"""
import json, os, random, subprocess, sys, threading, time, urllib.request, urllib.error, datetime

base, tokens, airs, cfg, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
train_min, test_min, repo = float(sys.argv[6]), float(sys.argv[7]), sys.argv[8]
rng = random.Random(int(os.environ.get("SEED", "1")))
lock = threading.Lock()
lines = []

def files_in(folder, ext):
    out = []
    for root, _, names in os.walk(os.path.join(repo, folder)):
        for n in names:
            if n.endswith(ext):
                out.append(os.path.relpath(os.path.join(root, n), repo))
    return sorted(out)[:200]

def text_of(path, limit):
    with open(os.path.join(repo, path), errors="replace") as f:
        return f.read(limit)

def call(agent, tool, args, label, factor=0):
    body = json.dumps({"tool": tool, "arguments": args, "timeout_ms": 30000}).encode()
    raw = json.dumps(args, separators=(",", ":"))
    req = urllib.request.Request(base + "/v1/call", data=body, method="POST",
                                 headers={"Authorization": "Bearer " + tokens[agent], "Content-Type": "application/json"})
    at = datetime.datetime.now(datetime.timezone.utc)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            status = r.status
    except urllib.error.HTTPError as e:
        status = e.code
    except Exception:
        status = 0
    line = {"time": at.isoformat().replace("+00:00", "Z"), "agent": agent, "tool": tool,
            "args_bytes": len(raw.encode()), "label": label, "status": status}
    if len(raw) < 1024:
        line["args"] = json.loads(raw)
    if factor:
        line["factor"] = factor
    with lock:
        lines.append(line)

docs, pipe, conf, store, guardf = files_in("docs", ".md"), files_in("pipeline", ".go"), files_in("config", ".go"), files_in("store", ".go"), files_in("guard", ".go")
every = [p for p in files_in(".", ".go") if "/" in p]

def read(agent, pool):
    return ("read-file", {"space": "repo", "path": rng.choice(pool), "max_bytes": 4096})

# name: (calls a minute in a session, session s, pause s, habit)
habits = {
    "ana": (6, (40, 150), (20, 90), lambda: read("ana", docs) if rng.random() < 0.8 else ("list-files", {"space": "repo", "dir": "docs/"})),
    "ben": (4, (60, 180), (30, 120), lambda: read("ben", pipe) if rng.random() < 0.7 else ("compare", {"a": text_of(rng.choice(pipe), 3000), "b": text_of(rng.choice(pipe), 3000)})),
    "cleo": (3, (40, 120), (30, 150), lambda: ("summarize", {"text": text_of(rng.choice(docs), rng.randint(2000, 12000))}) if rng.random() < 0.5 else read("cleo", docs)),
    "dov": (1.5, (120, 300), (60, 200), lambda: read("dov", conf)),
    "eli": (15, (20, 60), (20, 90), lambda: ("calculator", {"expression": f"({rng.randint(1, 999)} + {rng.randint(1, 99)}) * {rng.randint(2, 9)}"})),
    "fetch-bot": (30, (20, 40), (90, 120), lambda: read("fetch-bot", store) if rng.random() < 0.8 else ("list-files", {"space": "repo", "dir": "store/pg"})),
    "gus": (1.5, (90, 240), (60, 200), lambda: ("summarize", {"text": text_of("README.md", rng.randint(8000, 40000))})),
    "hal": (4, (40, 150), (20, 120), lambda: read("hal", every)),
}

# An agent's own traffic pauses while it bursts and for the minute after:
# its calls then are the burst's, not normal ones (agent -> time).
busy_until = {}

def nap(seconds, until):
    time.sleep(max(0, min(seconds, until - time.time())))

def run_agent(name, until, stop):
    rate, sess, pause, habit = habits[name]
    nap(rng.uniform(0, pause[1] / 2), until)
    while time.time() < until and not stop.is_set():
        end = min(until, time.time() + rng.uniform(*sess))
        while time.time() < end:
            if time.time() < busy_until.get(name, 0):
                nap(1, end)
                continue
            tool, args = habit()
            call(name, tool, args, "normal")
            nap(rng.expovariate(rate / 60.0), end)
        nap(rng.uniform(*pause), until)

def phase(minutes, inject=None):
    until = time.time() + minutes * 60
    stop = threading.Event()
    ts = [threading.Thread(target=run_agent, args=(n, until, stop)) for n in habits]
    for t in ts:
        t.start()
    if inject:
        inject(until)
    for t in ts:
        t.join()

def anomalies(until):
    span = until - time.time()
    plan = [
        (0.10, lambda: call("dov", "calculator", {"expression": "2+2"}, "novel")),
        (0.15, lambda: call("ana", "summarize", {"text": text_of(rng.choice(docs), 4000)}, "novel")),
        (0.20, lambda: call("eli", "read-file", {"space": "repo", "path": rng.choice(docs), "max_bytes": 4096}, "novel")),
        (0.25, lambda: call("ben", "compare", {"a": text_of("README.md", 200000), "b": text_of("README.md", 200000)}, "payload", 100)),
        (0.30, lambda: call("dov", "read-file", {"space": "repo", "path": rng.choice(guardf), "max_bytes": 4096}, "path")),
        (0.35, lambda: call("ana", "read-file", {"space": "repo", "path": rng.choice(store), "max_bytes": 4096}, "path")),
        (0.40, lambda: call("eli", "calculator", {"expression": "+".join(["1"] * 1500)}, "payload", 100)),
        (0.45, lambda: burst("ana", 20)),
        (0.65, lambda: burst("dov", 20)),
        (0.80, lambda: call("cleo", "calculator", {"expression": "7*6"}, "novel")),
    ]
    start = time.time()
    for at, fn in plan:
        time.sleep(max(0, start + at * span - time.time()))
        fn()

def burst(agent, factor):
    rate, _, _, habit = habits[agent]
    end = time.time() + 60
    busy_until[agent] = end + 60
    while time.time() < end:
        tool, args = habit()
        call(agent, tool, args, "burst", factor)
        time.sleep(60.0 / (rate * factor))

def dump(name):
    with lock:
        ls = sorted(lines, key=lambda l: l["time"])
        lines.clear()
    with open(os.path.join(out, name), "w") as f:
        for l in ls:
            f.write(json.dumps(l, separators=(",", ":")) + "\n")
    return ls

phase(train_min)
train = dump("train.jsonl")
r = subprocess.run([airs, "guard", "train"], env=dict(os.environ, AIRS_CONFIG=cfg), capture_output=True, text=True)
print(r.stdout.strip(), r.stderr.strip(), file=sys.stderr)
time.sleep(5)  # the server loads the model within AnomalyWatchInterval
phase(test_min, anomalies)
test = dump("test.jsonl")
held = {}
for l in test:
    k = (l["label"], l["status"])
    held[k] = held.get(k, 0) + 1
print(f"{len(train)} training and {len(test)} test calls; live answers by label and HTTP status:", file=sys.stderr)
for (label, status), n in sorted(held.items()):
    print(f"  {label:9} {status}: {n}", file=sys.stderr)
