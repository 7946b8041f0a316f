#!/usr/bin/env bash
# The main job in its embedded default (no Ollama needed): a space of real PDFs,
# the built-in tools through the 7-stage pipeline, selection in no-LLM mode, the
# seed's two pipelines, and the audit chain.
#
# Everything lives in one temp folder, named at the start and at the end and
# kept afterwards (its documents, airs.yaml and state): the demo sets its own
# AIRS_HOME and AIRS_CONFIG, so the user's state and configuration are never
# read or written ($AIRS_HOME would otherwise win over the file's home:).
#
# Env: AIRS_BIN (default ./bin/airs, built if missing), TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."
airs=${AIRS_BIN:-$PWD/bin/airs}
if [ ! -x "$airs" ]; then
	echo "building ./bin/airs… (on a fresh machine the first build downloads and compiles the dependencies: a minute or more)"
	go build -o bin/airs ./cmd/airs
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/airs-demo.XXXXXX")
echo "demo folder: $work (documents, airs.yaml, state); your own AIRS_HOME and airs.yaml are not used"
mkdir -p "$work/documents"
cat > "$work/airs.yaml" <<YAML
home: $work/state
spaces:
  documents: $work/documents
recording: {enabled: true}
YAML
export AIRS_CONFIG=$work/airs.yaml AIRS_HOME=$work/state
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

say airs demo docs "$work/documents"
"$airs" demo docs "$work/documents"
say airs tools list
"$airs" tools list
say airs call calculator --args '{"expression":"(12.5 + 7) * 3"}'
"$airs" call calculator --args '{"expression":"(12.5 + 7) * 3"}'
say airs call list-files --args '{"space":"documents","dir":"papers","pattern":"*.pdf"}'
"$airs" call list-files --args '{"space":"documents","dir":"papers","pattern":"*.pdf"}'
say "airs call read-file --args '{\"space\":\"documents\",\"path\":\"../etc/passwd\"}'   # paths cannot escape a space"
"$airs" call read-file --args '{"space":"documents","path":"../etc/passwd"}' || echo "(exit $?)"
say 'printf "what is 17 * 23 + 4\n/why\nextract the text of the pdf papers/bm25.pdf in documents\n/quit\n" | airs chat --model none'
printf 'what is 17 * 23 + 4\n/why\nextract the text of the pdf papers/bm25.pdf in documents\n/quit\n' | "$airs" chat --model none || true
say airs run chains/examples/compare-pricing.yaml --input a=quotes/acme-2024.pdf --input b=quotes/acme-2025.pdf
"$airs" run chains/examples/compare-pricing.yaml --input a=quotes/acme-2024.pdf --input b=quotes/acme-2025.pdf
say airs run chains/examples/summarize-papers.yaml --input dir=papers
"$airs" run chains/examples/summarize-papers.yaml --input dir=papers
say airs audit verify
"$airs" audit verify

cat <<END

The demo's files are kept in $work:
  documents/   the sample PDFs (quotes/, papers/)
  airs.yaml    the configuration the demo ran with
  state/       its audit log and recorded sessions
Run more commands against them:  export AIRS_CONFIG=$work/airs.yaml AIRS_HOME=$work/state
Remove them:                     rm -rf $work
END
