#!/usr/bin/env bash
# The main job in its embedded default (no Ollama needed): a space of real PDFs,
# the built-in tools through the 7-stage pipeline, selection in no-LLM mode, the
# seed's two pipelines, and the audit chain. Everything lives in a temp dir.
set -euo pipefail
cd "$(dirname "$0")/.."
airs=$PWD/bin/airs
[ -x "$airs" ] || go build -o bin/airs ./cmd/airs
work=$(mktemp -d "${TMPDIR:-/tmp}/airs-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
go run ./internal/demodata/cmd/mkdemo "$work/documents"
cat > "$work/airs.yaml" <<YAML
home: $work/state
spaces:
  documents: $work/documents
recording: {enabled: true}
YAML
export AIRS_CONFIG=$work/airs.yaml
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

say airs tools list
"$airs" tools list
say airs call calculator --args '{"expression":"(12.5 + 7) * 3"}'
"$airs" call calculator --args '{"expression":"(12.5 + 7) * 3"}'
say airs call list-files --args '{"space":"documents","dir":"papers","pattern":"*.pdf"}'
"$airs" call list-files --args '{"space":"documents","dir":"papers","pattern":"*.pdf"}'
say "airs call read-file --args '{\"space\":\"documents\",\"path\":\"../etc/passwd\"}'   # paths cannot escape a space"
"$airs" call read-file --args '{"space":"documents","path":"../etc/passwd"}' || echo "(exit $?)"
if "$airs" help 2>&1 | grep -q '^  chat'; then
	say 'printf "what is 17 * 23 + 4\n/why\nextract the text of the pdf papers/bm25.pdf in documents\n/quit\n" | airs chat --model none'
	printf 'what is 17 * 23 + 4\n/why\nextract the text of the pdf papers/bm25.pdf in documents\n/quit\n' | "$airs" chat --model none || true
fi
say airs run chains/examples/compare-pricing.yaml --input a=quotes/acme-2024.pdf --input b=quotes/acme-2025.pdf
"$airs" run chains/examples/compare-pricing.yaml --input a=quotes/acme-2024.pdf --input b=quotes/acme-2025.pdf
say airs run chains/examples/summarize-papers.yaml --input dir=papers
"$airs" run chains/examples/summarize-papers.yaml --input dir=papers
say airs audit verify
"$airs" audit verify
