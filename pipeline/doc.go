// Package pipeline is the Tool Manager: the registry of tools and providers,
// and the seven-stage pipeline every tool call goes through (the stages are
// listed on Manager.Call).
//
// # Using it
//
//	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
//	reg.Register("local", tool, handler)           // or LoadManifest + Manifest.Register
//	reg.SetLiveness("remote", func() bool { ... })  // optional health check
//	log, _ := audit.Open(filepath.Join(home, "audit.jsonl"))
//	m, _ := pipeline.NewManager(pipeline.Config{Registry: reg, Audit: log, Policy: policy})
//	res, err := m.Call(ctx, pipeline.Request{CallID: id, Tool: "read-file", Params: js, Caller: user})
//	m.Cancel(id)                                     // from anywhere
//	os.Exit(pipeline.ExitCode(err)); fmt.Println(pipeline.Hint(err))
//	m.Close(); log.Close()
//
// # The stages (Manager.Call)
//
//  1. Request: per-caller rate limit (RateLimited; also for a caller whose
//     own short deadlines keep expiring, CallerTimeoutLimit), payload limit
//     (PayloadTooLarge), params decoded from JSON or MessagePack (MessagePack
//     is re-encoded as JSON; handlers and the validator only see JSON).
//  2. Lookup: the candidates for the name the caller may reach (level 1,
//     AccessPolicy.CanReach: ChannelCapabilityDenied when none) are ranked
//     (explicit provider, trust, predicted latency or else p50, error rate,
//     registration order — see rank and latency.go); the first that is
//     alive, not past its sunset and whose circuit is closed wins. A dead
//     provider is deregistered on the spot. Breakers count only provider
//     faults, never a caller's own deadline or a busy machine (BreakerConfig).
//  3. Capabilities: level 1 AccessPolicy.CanReach (channel, checked again), level 2
//     IntentVerifier (sync for destructive tools, async for the others,
//     skipped when nil), level 3 AccessPolicy.Holds for each required
//     capability (matching rules: Capability.Covers).
//  4. Schema validation: JSON Schema 2020-12 (santhosh-tekuri/jsonschema/v6),
//     ECMA-262 patterns (Go's linear-time regexp where it means the same,
//     else regexp2 with a match timeout: PatternTimeout), schemas compiled
//     once at registration; lenient tools get the seed's coercion table
//     (lenient.go). Every violation is listed with its JSON pointer.
//     Then the anomaly score (Config.Scorer, anomaly.go: warn, queue for
//     review, hold at AnomalyThresholds) and the intent gate (Config.Gate,
//     intent.go), which holds or queues what the score asks it to.
//  5. Dispatch: the caller's timeout if 0 < t ≤ 600 s, else the latency-class
//     default (ClassTimeouts) — or, for a call that gave none of a tool the
//     latency model knows, 3× its prediction within [1 s, class default];
//     the deadline counts from the start of stage 1, so the handler's
//     context carries what is left. A call the model is sure cannot finish
//     in what is left answers WouldTimeout without running (LatencyConfig).
//  6. Execution: the handler runs in its own goroutine; a panic becomes
//     ProviderCrashed; cancellation and timeouts answer at once (after a
//     short grace for partial output) even if the handler ignores them.
//  7. Delivery: return_schema check, breaker and metrics, a durable audit
//     record (package audit), then the Result.
//
// Nothing is retried. The 16 error kinds, their exit codes and hints are in
// errors.go.
//
// # Speculative execution
//
// Manager.Speculate (or Request.Speculative) runs a predicted call of a
// read-only, idempotent tool ahead of time, as its caller, through the
// same stages, and caches the result; a real call with the same caller,
// tool, provider, version and canonical params is answered from it right
// before stage 6, after its own checks. Budget, invalidation and audit
// marks: speculate.go.
//
// # The handler contract
//
// A Handler's context ends when the call is cancelled (Manager.Cancel, the
// caller's context: Ctrl-C, a client that went away) or its budget runs
// out. The caller is answered at once either way — stage 6 does not wait
// for the handler beyond CancelGrace — so a handler that keeps working
// after that burns CPU, memory and connections for an answer nobody will
// read, and holds up Manager.Close (and so a server's shutdown). Therefore:
//
//   - Stop within 100 ms of ctx ending, and return ctx.Err() (optionally
//     with the partial output done so far, delivered as Cancelled/Timeout
//     when it arrives within CancelGrace).
//   - Check ctx.Err() in every loop whose length depends on the input: every
//     N iterations, N chosen so that N iterations take well under a
//     millisecond (the builtin tools check every 1024 lines, every 65,536
//     steps of the diff, every row of TextRank, every file of a walk,
//     every MiB read). Pass ctx to everything that takes one (network, a
//     model, exec.CommandContext); for a library that takes none, wrap its
//     input so that reads fail once ctx ended (pdf-extract's ctxReaderAt).
//   - Bound the work by the input limits the tool declares: the largest
//     input the tool accepts must finish within its latency class's
//     budget (ClassTimeouts) on the machine it serves, or the limit is too
//     high.
//
// A handler still running StragglerGrace (default 500 ms) after its context
// ended is a straggler: it is counted in /metrics
// (airs_handler_stragglers_total, by tool; airs_handlers_overrunning, those
// running now) and logged with the tool's name, once when detected and once
// when it finally returns.
package pipeline
