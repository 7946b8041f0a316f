#!/usr/bin/env python3
"""EVALS.md's "Speculative execution" section from `airs eval speculate --json`
output (argv[1]); printed to stdout. scripts/evals.sh includes it, and it can
be run alone on a saved run."""
import json, sys

runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {r["predictor"]: r for r in runs}
L = []
w = L.append
w("## Speculative execution (BFCL multi-turn replay)\n")
w("Package `evals/speculate`. Every ground-truth call of the 123 BFCL v4 multi-turn `base` conversations, with its "
  "arguments, is made in order through a real `pipeline.Manager` as the conversation's caller (each caller reaches only "
  "its conversation's classes). After each user turn and after each call, the predictor's top 2 predictions are run "
  "speculatively (`Manager.Speculate`: read-only, idempotent functions only — the list in `evals/speculate/data.go`, "
  "written from the functions' names and descriptions before any run; every other function is a write and invalidates "
  "every cached result); a real call matching one (same caller, tool, provider, version, canonical arguments, within the "
  "10 s TTL, no write since) is answered from it. BFCL's functions cannot run here: each is a handler that waits 5 ms and "
  "echoes its params, so hit rate and waste are independent of it and latency saved is in units of it. Clock: 60 s "
  "before each turn, 2 s before each call. The recommender starts empty (default configuration) and learns online "
  "from the replay, conversation after conversation, in file order; nothing was tuned on these figures.\n")
w("Command: `airs eval speculate --json` (data: `$DATA_DIR/bfcl_multi_turn`)\n")
w("| predictor | calls | speculable | speculations | hits | hit rate | hit rate (speculable) | used | wasted | saved (handler ms) | wasted (handler ms) | mean latency ms |")
w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in runs:
    name = "**airs**" if r["predictor"] == "airs" else r["predictor"]
    w(f"| {name} | {r['calls']} | {r['speculable_calls']} | {r['speculations']} | {r['hits']} | {r['hit_rate']:.3f} | "
      f"{r['hit_rate_speculable']:.3f} | {r['used']:.3f} | {r['wasted']} | {r['saved_ms']:.0f} | {r['wasted_ms']:.0f} | "
      f"{r['mean_latency_ms']:.2f} |")
w("")
w("- **off**: no speculation (the latency baseline). **airs**: the engine's `Speculator` as `airs serve` runs it — the "
  "live recommender's suggestions (with the arguments it filled and the schema stage checked), ranked up by affinity, "
  "and affinity repeats of the caller's last arguments. **oracle**: speculates exactly the next call — the ceiling the "
  "sandbox rule, the TTL and write invalidation leave.")
a = by.get("airs")
o = by.get("oracle")
if a:
    src = a.get("by_source") or {}
    parts = ", ".join(f"{k} {v['hits']} hits of {v['speculations']}" for k, v in sorted(src.items()))
    w(f"- AIRS's predictor answers {a['hits']} of {a['calls']} real calls ({a['hit_rate']:.1%}; {a['hit_rate_speculable']:.1%} "
      f"of the {a['speculable_calls']} calls a speculation may answer) and uses {a['used']:.1%} of its speculations: "
      f"{a['wasted']} of {a['speculations']} are wasted ({a['wasted_ms']:.0f} ms of handler time against {a['saved_ms']:.0f} ms "
      f"saved). By source: {parts or 'none'}. On {a.get('tool_only', 0)} more calls the speculations named the right "
      "function with other arguments: the suggestions' arguments (extracted from the turn's text, carried from earlier "
      "calls) are the weak part, not the choice of function.")
    if "affinity" not in src:
        w("- Affinity made no speculation: it needs 3 calls of one function by a caller within 30 minutes, and no "
          "conversation here calls a read-only function 3 times. Its part (ranking suggestions up, repeating the last "
          "arguments) is exercised by the engine's tests, not measured here; a recorded-session replay would.")
if o and a:
    w(f"- The oracle shows what better predictions would buy: {o['hit_rate']:.1%} of all calls answered at once, mean "
      f"real-call latency {o['mean_latency_ms']:.2f} ms against {by.get('off', o)['mean_latency_ms']:.2f} ms without "
      "speculation (latencies are wall clock on a shared machine: noisy to a few tenths of a millisecond; the counts are "
      "deterministic).")
w("")
print("\n".join(L))
