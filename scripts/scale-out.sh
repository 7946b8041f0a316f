#!/usr/bin/env bash
# scripts/scale-out.sh [CLIENTS] [DURATION] — issue 19's scale-out run on this
# machine, printing one JSON line at the end:
#
#   {"replicas":3,"throughput_ratio":…,"acknowledged":…,"in_audit":…,
#    "duplicated":…,"chain_verified":…,"chain_resumed":…, …}
#
#   1. PostgreSQL: re-runs itself under scripts/pg.sh (which installs
#      PostgreSQL 15 + pgvector when missing and starts a throwaway cluster)
#      unless AIRS_PG_DSN is already set;
#   2. 3 replicas of `airs serve --model none`, each with its own AIRS_HOME
#      (as on three machines), one airs.yaml with every storage key on postgres
#      (audit, index, learned, sessions, guard);
#   3. throughput, same run, same CLIENTS: ROUNDS rounds of SLICE seconds
#      with all load on replica 1, then the same load spread over the 3
#      (airs-load spread), the order alternating round by round;
#      throughput_ratio = 3-replica rps / 1-replica rps, each side over all
#      its rounds. Each side also reports commits/s, records per commit and
#      CPU per call (µs) of the replicas, PostgreSQL and the load generator
#      (side_1, side_3): where a side's time goes;
#   4. kill -9 of replica 3 halfway through a DURATION spread run; clients whose
#      call gets no answer retry on another replica with the same call_id.
#      Then: every acknowledged call id is looked up in airs_audit
#      (airs-load check: in_audit, lost, duplicated), and `airs audit
#      verify` checks the log — every replica's chain, their merge and
#      heads (chain_verified; audit_chains: the chains holding records);
#   5. chain resume on Temporal: CHAIN_RESUME_CMD (default: the
#      chains/temporal kill test under scripts/temporal.sh, which builds the
#      Temporal CLI once — about 15 minutes on a fresh machine, cached — and
#      starts its dev server) is run, and its last JSON line's chain_resumed
#      is reported; set CHAIN_RESUME_CMD= (empty) to skip it. Failing,
#      chain_resumed is false — never assumed.
#
# Defaults: 30 clients, DURATION 10s (the kill run), ROUNDS=10 rounds of
# SLICE=3s per side for the throughput comparison (30 s a side, in slices
# fine enough that the machine's other load weighs on both sides alike).
# The exit code is 0 only when the
# 3-replica run had no errors, no acknowledged call is lost, none is
# recorded twice, the chain verifies and, unless CHAIN_RESUME_CMD is set
# empty, the Temporal chain resumed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z ${AIRS_PG_DSN:-} ]]; then
	exec bash scripts/pg.sh bash "$0" "$@"
fi
clients=${1:-30}
dur=${2:-10s}
secs=${dur%s}
[[ $secs =~ ^[0-9]+$ ]] || { echo "scale-out.sh: DURATION must be whole seconds like 10s, got $dur" >&2; exit 2; }
rounds=${ROUNDS:-10}
slice=${SLICE:-3s}
[[ ${slice%s} =~ ^[0-9]+$ && $rounds =~ ^[0-9]+$ && $rounds -gt 0 ]] || { echo "scale-out.sh: SLICE must be whole seconds like 3s and ROUNDS a count, got $slice and $rounds" >&2; exit 2; }
GO=${GO:-go}
log() { echo "scale-out.sh: $*" >&2; }

$GO build -o bin/airs ./cmd/airs
$GO build -o bin/airs-load ./cmd/airs-load
work=$(mktemp -d "${TMPDIR:-/tmp}/airs-scale.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

tok=scale-$RANDOM$RANDOM$RANDOM
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# The load comes from one address (loopback) at more than the default
# per-address ceiling (http.limits.per_address_per_second, 1000/s: on
# loopback a ceiling for the whole host); three machines' clients would come
# from many addresses, so the ceiling is raised here, not the flood gate
# taken out.
cat >"$work/airs.yaml" <<YAML
agents:
  loader: {capabilities: []}
http:
  tokens:
    - {sha256: $(printf %s "$tok" | sha256sum | cut -d' ' -f1), agent: loader}
  limits: {per_address_per_second: 1000000, per_address_burst: 1000000}
storage:
  audit: postgres
  index: postgres
  learned: postgres
  sessions: postgres
  guard: postgres
  dsn: \${AIRS_PG_DSN}
manifests: [$work/ledger.yaml]
YAML
# A tool that is not idempotent, for the kill run: retries of its calls are
# claimed (pipeline.CallClaims on PostgreSQL), so none runs twice. Its
# handler is the calculator's; what matters is the declaration.
cat >"$work/ledger.yaml" <<YAML
provider: ledger
tools:
  - name: ledger_post
    version: 1.0.0
    description: Posts an entry to the ledger (not idempotent; scale-out test tool).
    handler: builtin.calculator
    parameters: {type: object, properties: {expression: {type: string}}, required: [expression]}
    trust: TL3
    latency_class: instant
    idempotent: false
YAML

urls=()
for r in 1 2 3; do
	port=$(free_port)
	mkdir -p "$work/home$r"
	AIRS_CONFIG=$work/airs.yaml AIRS_HOME=$work/home$r ./bin/airs serve --listen 127.0.0.1:$port --model none \
		2>"$work/serve$r.log" &
	pids+=($!)
	urls+=("http://127.0.0.1:$port/v1/call")
done
for r in 0 1 2; do
	base=${urls[$r]%/v1/call}
	for _ in $(seq 300); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.1; done
	curl -sf "$base/healthz" >/dev/null || { log "replica $((r + 1)) did not start:"; cat "$work/serve$((r + 1)).log" >&2; exit 1; }
done
log "3 replicas up on one PostgreSQL: ${urls[*]}"

body='{"tool":"calculator","arguments":{"expression":"(12.5 + 7) * 3"},"timeout_ms":5000}'
load() { ./bin/airs-load spread -token "$tok" -c "$clients" -d "$slice" -body "$body" "$@"; }
# ROUNDS short rounds alternating the order (1 then 3, 3 then 1, …), so a
# change of the machine's other load during the run weighs on both sides
# alike: the finer the slices, the less it can favour one side. rps of
# each side is its acknowledged calls over its seconds, all rounds.
all=$(IFS=,; echo "${urls[*]}")
# The database's committed transactions (every replica's, the audit's
# batches most of them): commits per second is what N machines would
# load PostgreSQL with (docs/scaling.md).
commits() { psql "$AIRS_PG_DSN" -tAc "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"; }
# CPU time (clock ticks) of the replicas and of PostgreSQL's processes
# (its pooled backends live through the run): with the load generator's
# own (cpu_s), where each side's CPU per call goes.
ticks_of() { # PIDS… → the sum of their utime + stime
	local t=0 p f
	for p in "$@"; do
		f=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		f=${f##*) }
		read -r -a a <<<"$f"
		t=$((t + a[11] + a[12]))
	done
	echo $t
}
# This cluster's server and its children (not another PostgreSQL on the
# machine); every "postgres" process when its data directory is not
# readable here.
pm=$(head -1 "$(psql "$AIRS_PG_DSN" -tAc 'SHOW data_directory')/postmaster.pid" 2>/dev/null || true)
pg_pids() { if [[ -n $pm ]]; then echo "$pm" $(pgrep -P "$pm"); else pgrep -x postgres; fi; }
ticks() { echo "$(ticks_of "${pids[@]}") $(ticks_of $(pg_pids))"; }
hz=$(getconf CLK_TCK)
: >"$work/one.jsonl"; : >"$work/three.jsonl"
for ((round = 1; round <= rounds; round++)); do
	order=(one three); ((round % 2)) || order=(three one)
	for side in "${order[@]}"; do
		if [[ $side == one ]]; then u=${urls[0]}; else u=$all; fi
		x0=$(commits); read -r a0 p0 <<<"$(ticks)"
		res=$(load -urls "$u") || log "round $round, $side: errors: $(jq -c '{statuses, first_error}' <<<"$res" 2>/dev/null)"
		x1=$(commits); read -r a1 p1 <<<"$(ticks)"
		jq -c --argjson n $((x1 - x0)) --argjson a "$(((a1 - a0) * 1000000 / hz))" --argjson p "$(((p1 - p0) * 1000000 / hz))" \
			'. + {commits: $n, airs_cpu_us: $a, pg_cpu_us: $p}' <<<"$res" >>"$work/$side.jsonl"
	done
	log "round $round: 1 replica $(jq -s '.[-1] | .rps | round' "$work/one.jsonl") calls/s, 3 replicas $(jq -s '.[-1] | .rps | round' "$work/three.jsonl") calls/s"
done
# Per side: rps, commits/s, records per commit and CPU per call (µs) of
# the replicas, PostgreSQL and the load generator.
sum() { jq -cs '(map(.acknowledged) | add) as $n | {rps: ($n / (map(.seconds) | add)), commits_per_s: ((map(.commits) | add) / (map(.seconds) | add)),
	records_per_commit: (($n / (map(.commits) | add)) * 10 | round / 10),
	cpu_us_per_call: {airs: ((map(.airs_cpu_us) | add) / $n | round), postgres: ((map(.pg_cpu_us) | add) / $n | round), load: ((map(.cpu_s) | add) * 1e6 / $n | round)},
	errors: (map(.errors) | add), p50_ms: (map(.p50_ms) | sort | .[length / 2 | floor]), p99_ms: (map(.p99_ms) | max)}' "$1"; }
one=$(sum "$work/one.jsonl"); three=$(sum "$work/three.jsonl")
log "1 replica:  $one"
log "3 replicas: $three"

# Kill -9 replica 3 halfway through a third run, of the non-idempotent tool.
kbody='{"tool":"ledger_post","arguments":{"expression":"(12.5 + 7) * 3"},"timeout_ms":5000}'
./bin/airs-load spread -token "$tok" -c "$clients" -d "$dur" -body "$kbody" \
	-urls "$(IFS=,; echo "${urls[*]}")" -acked "$work/acked" >"$work/kill.json" &
lp=$!
sleep "$(python3 -c "print($secs / 2)")"
kill -9 "${pids[2]}"
log "killed replica 3 (pid ${pids[2]}) with SIGKILL mid-load"
wait $lp || true
killrun=$(cat "$work/kill.json")
log "kill run:   $killrun"

# The calls that ran: a retry answered already_claimed ran nothing, nor did
# one answered with the first attempt's outcome ("replayed": its record is
# marked so, and the first attempt has its own).
psql "$AIRS_PG_DSN" -Atc "SELECT (line::json)->>'call_id' FROM airs_audit WHERE (line::json)->>'error' IS DISTINCT FROM 'already_claimed' AND (line::json)->>'replayed' IS DISTINCT FROM 'true' ORDER BY seq" >"$work/audit-ids"
claims=$(psql "$AIRS_PG_DSN" -Atc "SELECT count(*) FROM airs_call_claims")
checked=$(./bin/airs-load check -acked "$work/acked" -audit "$work/audit-ids") || true
log "audit:      $checked"
verify=$(AIRS_CONFIG=$work/airs.yaml AIRS_HOME=$work/home1 ./bin/airs audit verify --json) || true
log "verify:     $verify"
[[ $verify == "{"* ]] || verify='{}'
[[ $checked == "{"* ]] || checked='{}'
chain_verified=$(jq -r '.ok == true' <<<"$verify")

chain_resumed=false
CHAIN_RESUME_CMD=${CHAIN_RESUME_CMD-"bash scripts/temporal.sh $GO test -count=1 -v -run TestE2EChainSurvivesKilledWorkers ./chains/temporal/"}
resume_note="CHAIN_RESUME_CMD set empty: not run"
if [[ -n ${CHAIN_RESUME_CMD:-} ]]; then
	log "chain resume: $CHAIN_RESUME_CMD"
	rc=0
	out=$(bash -c "$CHAIN_RESUME_CMD" 2>"$work/resume.err") || rc=$?
	if ((rc == 0)); then
		line=$(grep '^{' <<<"$out" | tail -1 || true)
		if [[ -n $line && $(jq -r '.chain_resumed == true' <<<"$line" 2>/dev/null) == true ]]; then
			chain_resumed=true
			resume_note="$CHAIN_RESUME_CMD"
		else
			resume_note="CHAIN_RESUME_CMD printed no {\"chain_resumed\":true} line"
		fi
	else
		resume_note="CHAIN_RESUME_CMD exited $rc: $(tail -3 "$work/resume.err" | tr '\n' ' ')"
	fi
fi

jq -cn --argjson one "$one" --argjson three "$three" --argjson kill "$killrun" --argjson c "$checked" \
	--argjson verified "$chain_verified" --argjson v "$verify" --argjson resumed "$chain_resumed" --arg note "$resume_note" \
	--argjson clients "$clients" --argjson rounds "$rounds" --argjson slice "${slice%s}" --argjson claims "${claims:-0}" '{
  replicas: 3,
  throughput_ratio: ((($three.rps / $one.rps) * 1000 | round) / 1000),
  rps_1: ($one.rps | round), rps_3: ($three.rps | round), commits_per_s_1: ($one.commits_per_s | round), commits_per_s_3: ($three.commits_per_s | round), errors_1: $one.errors, errors_3: $three.errors,
  clients: $clients, rounds: $rounds, seconds_per_slice: $slice,
  side_1: ($one | {records_per_commit, cpu_us_per_call, p50_ms, p99_ms}), side_3: ($three | {records_per_commit, cpu_us_per_call, p50_ms, p99_ms}),
  acknowledged: ($c.acknowledged // 0), in_audit: ($c.in_audit // 0), lost: ($c.lost // null),
  duplicated: ($c.duplicated // null), unacked_in_audit: ($c.unacked_in_audit // null),
  retried: $kill.retried, claimed_earlier: ($kill.claimed_earlier // 0), replayed: ($kill.replayed // 0), claims: $claims, kill_run_errors: $kill.errors,
  chain_verified: $verified, audit_records: ($v.records // null), audit_chains: ([$v.chains[]? | select(.records > 0)] | length),
  chain_resumed: $resumed, chain_resume: $note
}' | tee "$work/result.json"
jq -e '.errors_1 == 0 and .errors_3 == 0 and .lost == 0 and .duplicated == 0 and .chain_verified and .kill_run_errors == 0
	and (.chain_resumed or .chain_resume == "CHAIN_RESUME_CMD set empty: not run")' "$work/result.json" >/dev/null
