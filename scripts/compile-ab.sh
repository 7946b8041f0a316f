#!/usr/bin/env bash
# compile-ab.sh BASE [ROUNDS] — same-run compile-time A/B of the grammar:
# builds grammar/bench/cmd/compiletimes against BASE (a git revision, in a
# temporary worktree) and against the working tree, runs them alternately
# ROUNDS times (default 3) over $DATA_DIR/jsonschemabench, and prints
# p50/p90/p99 of the per-schema median over the schemas BASE compiles, and
# the same over everything the working tree compiles.
set -euo pipefail
base=${1:?usage: compile-ab.sh BASE_REV [ROUNDS]}
rounds=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
data=${DATA_DIR:-$root/../shared/data}/jsonschemabench
[ -d "$data" ] || { echo "compile-ab: no $data (set DATA_DIR)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$root" worktree add -q --detach "$tmp/base" "$base"
mkdir -p "$tmp/base/grammar/bench/cmd/compiletimes"
cp "$root/grammar/bench/cmd/compiletimes/main.go" "$tmp/base/grammar/bench/cmd/compiletimes/"
(cd "$tmp/base" && go build -o "$tmp/ct-base" ./grammar/bench/cmd/compiletimes)
(cd "$root" && go build -o "$tmp/ct-new" ./grammar/bench/cmd/compiletimes)
for i in $(seq "$rounds"); do
	echo "round $i/$rounds: base…" >&2
	"$tmp/ct-base" "$data" > "$tmp/base-$i.tsv"
	echo "round $i/$rounds: new…" >&2
	"$tmp/ct-new" "$data" > "$tmp/new-$i.tsv"
done
python3 - "$tmp" "$rounds" "$base" <<'PY'
import sys, statistics
tmp, rounds, base = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def load(kind):
    runs = []
    for i in range(1, rounds + 1):
        d = {}
        for line in open(f"{tmp}/{kind}-{i}.tsv"):
            f, i_, ok, ms = line.rstrip("\n").split("\t")
            d[(f, i_)] = (ok == "true", float(ms))
        runs.append(d)
    keys = runs[0].keys()
    return {k: (runs[0][k][0], statistics.median(r[k][1] for r in runs)) for k in keys}
b, n = load("base"), load("new")
both = [k for k in b if b[k][0] and k in n and n[k][0]]
lost = [k for k in b if b[k][0] and not (k in n and n[k][0])]
def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]
print(f"same-run A/B, {rounds} rounds alternating, per-schema median; base {base}")
print(f"schemas compiled by base: {sum(1 for k in b if b[k][0])}, by new: {sum(1 for k in n if n[k][0])}, compiled by base and not new: {len(lost)}")
print(f"| on the {len(both)} both compile | base ms | new ms | new / base |")
print("|---|---:|---:|---:|")
for p in (50, 90, 99):
    x, y = pct([b[k][1] for k in both], p), pct([n[k][1] for k in both], p)
    print(f"| p{p} | {x:.3f} | {y:.3f} | {y/x:.2f} |")
alln = [n[k][1] for k in n if n[k][0]]
print(f"all the new tree compiles: p50 {pct(alln,50):.3f} ms, p99 {pct(alln,99):.3f} ms")
PY
