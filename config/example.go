package config

// Example is an annotated airs.yaml with every key (`airs help config`
// prints it). Every section is optional; see the package comment for the
// defaults.
const Example = `# airs.yaml — AIRS configuration. Every section is optional.
# Location: --config FILE, else $AIRS_CONFIG, else ~/.config/airs/airs.yaml.
# Relative paths are relative to this file's folder; ~ and $VARS expand.

# State directory (audit log, vector index, recorded sessions).
# $AIRS_HOME overrides it; default ~/.local/share/airs.
home: ~/.local/share/airs

# Spaces: named folders the file tools (list-files, read-file, pdf-extract)
# may read. A caller needs ReadSpace(NAME) to read space NAME. Without this
# section: cwd (the folder airs runs in) and documents (~/Documents).
spaces:
  documents: ~/Documents

# Agents: the identities callers act as, with what they hold.
# Without this section: one agent "local" holding ReadSpace(*), Network(*).
agents:
  local:
    capabilities: ["ReadSpace(*)", "Network(*)"]
  web-ui:
    capabilities: ["ReadSpace(documents)"]
    providers: [builtin]            # providers it may reach; default: all
    rate_limit: {per_second: 20, burst: 40}
    trust: 1                        # 0 (unknown) … 3 (kept for older configs; the anomaly gate now learns each agent's habits instead)

# The CLI acts as the agent its OS user maps to ("*": any other user).
# Without this section every user is "local" (if that agent exists).
cli:
  users:
    "*": local

# airs serve: loopback by default. Tokens are stored hashed:
#   printf %s "$TOKEN" | sha256sum
http:
  listen: 127.0.0.1:7777
  tokens:
    - sha256: 0000000000000000000000000000000000000000000000000000000000000000
      agent: web-ui
  max_body: 2097152    # bytes of one request body
  # Each endpoint's input, at most (413 past it); shown with defaults.
  limits: {select_text: 8192, plan_text: 4096, plan_parts: 16, chat_text: 8192, pipeline_yaml: 65536}
  # Floods: requests a second (and at once) per client address, before
  # authentication; a client that asks again before its 429's Retry-After
  # is held until then. Heavy work (select, plan, chat over heavy_text
  # bytes; a call body over heavy_call_body) runs heavy_per_agent of one
  # agent at once, heavy_total of all (default: one less than the cores).
  # limits: {per_address_per_second: 1000, per_address_burst: 1000, heavy_text: 1024, heavy_call_body: 65536, heavy_per_agent: 1}

# Circuit breaker: this many failures within window open a tool's circuit
# for cooldown (failures: -1 disables it).
breaker: {failures: 5, window: 30s, cooldown: 30s}

# A caller whose calls time out this many times within window on a deadline
# it chose (shorter than the tool's own budget) is refused (429) for
# cooldown; others are not, and such timeouts never open a breaker
# (timeouts: -1 disables the limit).
caller_timeouts: {timeouts: 5, window: 30s, cooldown: 10s}

# Default per-caller rate limit (0 = unlimited); agents may override it.
rate_limit: {per_second: 0, burst: 0}

# Largest params of one call, in bytes.
max_payload: 1048576

# Latency prediction: once a tool has 32 finished calls, its providers are
# tried fastest-predicted first, a call with no timeout gets 3x its predicted
# time (at least 1s, at most the latency class's default), and a call the
# model is sure cannot finish in its timeout answers would_timeout (exit 24,
# HTTP 412) without running; would_timeout: false dispatches those anyway.
latency: {enabled: true, would_timeout: true}

# Tool calls one chat turn (airs chat, /v1/chat) may make: after a result the
# model may call another tool, up to this many; 1 = one call per request.
max_steps: 5

# Tool manifests (YAML or JSON) to load at start; globs allowed.
manifests: []

# Ollama. No model: the documented no-LLM mode. $OLLAMA_HOST is read too.
ollama:
  host: http://127.0.0.1:11434
  model: ""
  embed_model: ""

# What decodes the selector's calls: ollama (the server above), or inproc (a
# GGUF loaded in process and decoded under AIRS's own token masks; needs a
# binary built with -tags inproc, see docs/inproc.md). The
# in-process model is either gguf (a file) or name (a model already pulled
# into Ollama, e.g. qwen3:4b: its GGUF is read from Ollama's store,
# $OLLAMA_MODELS or ~/.ollama/models); set one.
model:
  engine: ollama
  gguf: ""
  name: ""
  # threads per token of the in-process engine; 0: half the logical CPUs
  # (one core left for the masks; two spinning threads on a busy 2-core
  # machine stall). On a quiet machine one per core decodes faster.
  threads: 0

# Ranking of candidate tools: the weights of its components, inline (an
# omitted component weighs 0) or as the path of the JSON file that
# 'airs eval tune --write FILE' writes. Default: the values below. What
# AIRS learns from use (success, latency, your verdicts) is kept in
# $AIRS_HOME/learned.json.
selection:
  weights: {semantic: 0.55, trust: 0.15, success: 0.15, latency: 0.05, preference: 0.10}
  # Without a model, AIRS answers "no tool fits" when no tool's description
  # uses at least this share of the request's words (0..1; stop words are
  # skipped; quoted texts, file names and numbers count as "text", "file",
  # "number"). Unset: the calibrated default, which refuses about 5% of
  # realistic requests (EVALS.md, "No tool fits"); 0 never refuses.
  # min_coverage: 0.4
  # The tool index's embedder: blend (the trained tool model with
  # pretrained word vectors, default), model (the tool model alone: better
  # only on tools like those it was trained on; a faster scan, less
  # memory), lexical, or ollama (needs ollama.embed_model).
  # embedder: blend

# Proactive suggestions (airs recommend, chat, /v1/recommendations). All
# optional; shown with their defaults.
recommend:
  enabled: true        # false: no suggestions anywhere
  watch: true          # watch the spaces' files (chat, serve)
  ttl: 10m             # a suggestion's life; unanswered, it counts as ignored
  per_minute: 6        # new suggestions per agent per minute
  max_active: 5        # live suggestions per agent
  threshold: 0.35      # fused probability a suggestion needs (0..1)
  cooldown: 1h         # a dismissed tool rests this long in that context
  suppress_after: 3    # dismissals in one context that silence the tool there
  suppress_for: 720h   # for this long

# The guard: a destructive tool's call (delete-file, say) waits until a
# person confirms it. The CLI asks ("allow once / always for this agent /
# deny"); over HTTP the call answers 428 intent_verification_required with a
# confirmation id, which 'airs review approve ID', POST
# /v1/reviews/ID/approve (by a reviewer) or the attention page approves;
# the same call sent again then runs. Calls of review_tools go ahead and
# are queued for review after the fact. All optional; shown with defaults.
guard:
  enabled: true
  review_tools: []     # read-only tools to review after the fact, e.g. [read-file]
  reviewers: []        # agents who may decide over HTTP and in the page
  self_approve: false  # true lets a reviewer approve a call it held itself
  expiry: 15m          # a confirmation waits this long for a decision (max 24h)
  max_pending: 1000    # open reviews after the fact, at most
  # The anomaly gate scores every call (no LLM: each agent's habits as the
  # audit log shows them — its rates, tools, folders, argument sizes and
  # hours — each judged only once there is enough history behind it). Train the
  # model with 'airs guard train' (it writes the model
  # file below); a model written later is picked up without a restart. No
  # model file: the gate is off, and airs says so when model is set here.
  anomaly:
    # model: FILE    # default $AIRS_HOME/guard/anomaly.model
    warn: 0.8          # at or above: a warning in the log; the call goes on
    review: 0.9        # the call goes on, queued for review ('airs review')
    block: 0.95        # held until a person confirms it, as a destructive call
    # candidate: new.model    # a second model for a share of callers (A/B),
    # candidate_share: 0.1    # chosen by a hash of the caller: each sees one model
  # Tool affinity: a caller that calls a tool threshold times within window
  # has an affinity for it, kept in $AIRS_HOME/guard/affinity.json. airs chat
  # and airs serve then warm that tool's provider at start and keep it warm,
  # keep the selector's Ollama model loaded (keep_alive, renewed while the
  # affinity lasts), and cache the tool's lookup for that caller.
  affinity:
    enabled: true
    window: 30m        # 1m..24h, counted in 6 steps
    threshold: 3       # calls within the window
    keep_alive: 5m     # Ollama keep_alive for the model; 10s..24h

  # Speculative execution: after each call, the calls AIRS predicts next
  # (the recommender's suggestions, ranked up by affinity) run ahead of
  # time — read-only, idempotent tools only, as the same agent, through
  # every check — and a matching real call is answered from the result.
  speculation:
    enabled: false
    max_inflight: 2    # speculative calls at once
    per_minute: 30     # per agent
    ttl: 10s           # a result answers a real call this long (max 5m)
    idle_below: 4      # speculate only while fewer real calls are in flight
    top: 2             # predicted calls speculated after each call

# Outside MCP servers (client mode): their tools are registered as NAME.tool
# and every one requires MCP(NAME) beside requires:, so none is callable until
# an agent is granted it (add "MCP(fs)" to its capabilities). 'airs tools
# review NAME' shows the tools and what granting means. Shown commented out:
# a configured server is started by every command that builds the registry.
# mcp:
#   serve:                                 # AIRS as an MCP server ('airs mcp', /mcp of 'airs serve')
#     tool_search: false                   # true: tools/list starts with search_tools alone and grows
#                                          # with the tools it finds (a client with 1,000 tools
#                                          # sends its model a few)
#     search_limit: 5                      # tools per search when the client asks for no number (1-50)
#   sampling:                              # a server's sampling/createMessage, answered by the model
#     enabled: true                        # false: refused (and not advertised)
#     max_tokens: 1024                     # a request asking for more gets this many (at most 32768)
#     timeout: 60s                         # the model's answer (at most 600s)
#   servers:
#     fs:                                  # stdio: AIRS starts the command
#       command: [npx, -y, "@modelcontextprotocol/server-filesystem@2026.8.31", ~/Documents]
#       args: []                           # appended to command
#       env: {}                            # the server's environment: these, and HOME, PATH, LANG,
#                                          # TERM, USER, LOGNAME, SHELL of AIRS's; nothing else
#       pass_env: []                       # names of AIRS's variables it gets too, e.g. [GITHUB_TOKEN]
#       dir: ""                            # working directory (default: AIRS's)
#       requires: ["ReadSpace(documents)"]
#       prefix: fs                         # tools are PREFIX.tool (default: the name)
#       timeout: 30s                       # one call, when the caller asks for none
#       max_tools: 1000                    # more listed: the server is not started
#       max_message_bytes: 16777216        # one JSON-RPC message read from it
#       max_response_bytes: 4194304        # one tool result
#       restarts_per_minute: 3             # past it, the server rests, then is tried again
#       grace: 2s                          # after a cancel, to answer a ping (else killed)
#       sampling: {max_tokens: 256}        # this server's keys over mcp.sampling
#       tools:                             # what a tool may do, over its annotations (claims):
#         write_file: {effect: destructive}  # read, write or destructive
#     remote:                              # streamable HTTP
#       url: https://mcp.example.org/mcp
#       headers_from_env: {Authorization: REMOTE_MCP_AUTH}   # value read from $REMOTE_MCP_AUTH

# Other AIRS instances as providers: each peer's /mcp (its 'airs serve'), its
# tools offered as peer.NAME.tool. Every one requires MCP(peer.NAME), held only
# by the agents grant: lists (or that name it in their capabilities); on the
# peer the call runs as the agent its http.tokens map the token to. See
# docs/scaling.md.
# peers:
#   - name: lab
#     url: http://lab.example:7777/mcp
#     token: ${LAB_TOKEN}                  # an environment variable, never the token itself
#     grant: [local]                       # local agents that may use its tools
#     requires: []                         # more a caller must hold
#     timeout: 30s                         # one call (default 5s)

# Where shared state lives. The default keeps the audit log in
# $AIRS_HOME/audit.jsonl and the tool index in $AIRS_HOME/index. With
# several 'airs serve' replicas, put them in one PostgreSQL (one hash chain
# for all of them; the tool index on pgvector, embedded once, ranked as the
# embedded one; the ranker's learned statistics and preferences merged from
# every replica, and the recommender's learning; recorded sessions, when
# recording is on; the guard's confirmations, grants and anomaly models;
# the schema is migrated on start), each key on its own, and the DSN
# (${VAR} is expanded, so a password can stay in the environment). See
# docs/scaling.md.
# storage:
#   audit: postgres
#   index: postgres
#   learned: postgres
#   sessions: postgres
#   guard: postgres
#   dsn: ${AIRS_PG_DSN}
#   audit_gather: 3ms    # how long the audit writer may wait for concurrent
#                        # calls to share a commit (0: never; a lone call never waits)

# Where chains run (airs run, airs plan --run, POST /v1/pipelines/run, chat
# plans). The default runs them in process. On Temporal each chain is a
# workflow that survives the replica that started it: every replica runs
# 'airs worker'; the chain's budget (--timeout, "timeout_ms", its timeout:)
# is the workflow's. See docs/scaling.md, "Chains on Temporal".
# chains:
#   engine: temporal
#   address: 127.0.0.1:7233            # the Temporal frontend
#   namespace: default
#   task_queue: airs
#   heartbeat_timeout: 10s             # a call without its worker's heartbeat this long is lost
#   max_attempts: 5                    # of an idempotent call whose worker was lost (others: 1)
#   ledger_dir: ~/.airs/chain-ledger   # shared by the replicas

# Call claims (storage.audit postgres): a retried non-idempotent call (same
# call_id) runs once; a retry after the first attempt ended gets its
# outcome back ("replayed": true). Claims are kept this long (default 168h).
# claims:
#   retention: 168h

# Session recording for evals; values under these keys are replaced by
# [redacted] (added to: password passwd secret token api_key apikey
# authorization cookie).
recording:
  enabled: false
  redact: []
`
