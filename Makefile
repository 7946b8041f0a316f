# AIRS build targets. DATA_DIR points at the public reference data (read-only).
DATA_DIR ?= ../shared/data
GO       ?= go
export DATA_DIR

.PHONY: all build test conformance e2e e2e-pg e2e-inproc e2e-temporal inproc bench demo fuzz vet clean scale-out pieces

all: build

build:
	$(GO) build -o bin/airs ./cmd/airs

## test: unit tests with the race detector; needs nothing outside the repo.
## DATA_DIR is cleared so the data-dependent tests skip here: make conformance
## runs them (without -race, which makes them several times slower).
test:
	$(GO) vet ./...
	DATA_DIR= $(GO) test -race -count=1 -timeout 30m ./...

## fuzz: a short run of every fuzz target (CI runs this).
fuzz:
	bash scripts/fuzz.sh 10s

## conformance: the big public datasets under DATA_DIR -> CONFORMANCE.md, EVALS.md.
conformance:
	bash scripts/conformance.sh

## e2e: builds Ollama v0.17.4 from its Go module (cached), runs it with a tiny generated model;
## among its tests a new user's first five minutes (e2e/newuser_test.go: a fresh clone,
## an empty home, make demo, README's quick start, airs doctor before and after ollama serve).
e2e:
	bash scripts/e2e.sh

## inproc: bin/airs-inproc, airs with the in-process engine (build tag inproc, cgo;
## llama.cpp from the Ollama v0.17.4 module: the headers are the e2e build's).
inproc:
	bash scripts/inproc.sh build bin/airs-inproc

## e2e-pg: the PostgreSQL backend's tests (store/pg: audit, migrations, the tool index on
## pgvector against the embedded one; airs audit/guard/select and the engine's learned state
## on postgres; recorded sessions, the recommender's store and the guard's reviews and models
## shared by two replicas; call claims and their replayed outcomes across replicas)
## against a throwaway PostgreSQL 15 + pgvector that scripts/pg.sh installs,
## starts and removes. AIRS_PG_EVAL=1 adds the full retrieval evaluation on both backends.
e2e-pg:
	bash scripts/pg.sh $(GO) test -race -count=1 ./store/pg/ ./evals/pgindex/ ./cmd/airs/ ./internal/engine/ -run 'Postgres|PG|Audit|Migrat|Vector|Schema|ToolIndex|Claim|SessionLog|RecommenderStore|GuardStore|AnomalyModels'

## scale-out: 3 airs serve replicas on one PostgreSQL (scripts/pg.sh): throughput of 3
## against 1, kill -9 of one mid-load, every acknowledged call in the audit log, the
## chain verified, a chain resumed on Temporal after its worker is killed
## (CHAIN_RESUME_CMD; empty skips it). Retried non-idempotent calls run once. One JSON line.
scale-out:
	bash scripts/scale-out.sh $(SCALE_CLIENTS) $(SCALE_DURATION)

## e2e-temporal: chains on Temporal against a real dev server (the Temporal CLI v1.5.1
## built from its Go module, cached): two worker processes killed mid-chain with
## SIGKILL; prints {"chain_resumed":true,"steps_repeated":0,...}; then airs run, airs
## serve's /v1/pipelines/run and airs plan --run on an airs worker (TestTemporal*: the
## in-process runner's answers, the budget, a worker killed mid-chain, unreachable).
e2e-temporal:
	bash scripts/temporal.sh sh -c '$(GO) test -race -count=1 -v ./chains/temporal/ && $(GO) test -count=1 -v -run TestTemporal ./cmd/airs/'

## e2e-inproc: the in-process engine's tests on the tiny model (BFCL, JSONSchemaBench
## validity; per-token cost). make e2e runs them too, with the Ollama comparison.
e2e-inproc:
	bash scripts/inproc.sh test -v

## pieces: distil a sentence encoder (Universal Sentence Encoder lite, run
## under Node from its npm package) into piece vectors for the blend
## (`--embedder blend:pieces=W,piecesfile=$(TEACHER)/pieces.bin.gz`): the
## training texts, the encoder's vectors of them (two processes, about 15
## minutes on two cores), then the fit (about a minute). Not built into airs:
## EVALS.md, "distilled sentence pieces".
TEACHER ?= $(CURDIR)/.teacher
pieces:
	mkdir -p $(TEACHER)
	$(GO) run ./cmd/airs train retrieval --data-dir $(DATA_DIR) --extra all --teacher-texts $(TEACHER)/texts.in.jsonl
	cd scripts/teacher && npm ci --no-audit --no-fund
	node scripts/teacher/vocab.js $(TEACHER)/vocab.jsonl
	node scripts/teacher/embed.js $(TEACHER)/texts.in.jsonl $(TEACHER)/texts.0.jsonl 0 2 & \
	node scripts/teacher/embed.js $(TEACHER)/texts.in.jsonl $(TEACHER)/texts.1.jsonl 1 2; \
	s=$$?; wait $$! && test $$s -eq 0
	cat $(TEACHER)/texts.0.jsonl $(TEACHER)/texts.1.jsonl > $(TEACHER)/texts.jsonl
	$(GO) run ./cmd/airs train retrieval --pieces $(TEACHER)/pieces.bin.gz --teacher $(TEACHER)

## bench: Go benchmarks and side-by-side peer runs, printed as tables.
bench:
	bash scripts/bench.sh

## demo: the main job in its embedded default (no Ollama needed), in a temp
## folder it names (its own AIRS_HOME and airs.yaml, never the user's). The
## first build on a fresh machine downloads and compiles the dependencies, so
## it says so before it starts and shows the packages compiled as it goes.
demo:
	@echo "building ./bin/airs… (on a fresh machine the first build downloads and compiles the dependencies: a few minutes; progress below)"
	@GO=$(GO) bash scripts/build-progress.sh bin/airs ./cmd/airs
	@bash scripts/demo.sh

clean:
	rm -rf bin
