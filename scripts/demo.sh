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
	echo "building ./bin/airs… (on a fresh machine the first build downloads and compiles the dependencies: a few minutes; progress below)"
	bash scripts/build-progress.sh bin/airs ./cmd/airs
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
# show prints a command as it can be pasted into a shell: arguments with
# spaces, quotes or other special characters are single-quoted.
show() {
	local out="" a q="'"
	for a in "$@"; do
		if [[ $a =~ ^[A-Za-z0-9_./=:@%+,-]+$ ]]; then
			out+="$a "
		else
			out+="'${a//$q/$q\\$q$q}' "
		fi
	done
	printf '\n\033[1m$ %s\033[0m\n' "${out% }"
}
# run shows an airs command, then runs it.
run() { show airs "$@"; "$airs" "$@"; }

echo "To paste the commands below into this shell afterwards, first run:"
echo "  export PATH=\"$(dirname "$airs"):\$PATH\" AIRS_CONFIG=$work/airs.yaml AIRS_HOME=$work/state"

run demo docs "$work/documents"
run tools list
run call calculator --args '{"expression":"(12.5 + 7) * 3"}'
run call list-files --args '{"space":"documents","dir":"papers","pattern":"*.pdf"}'
echo "# paths cannot escape a space:"
run call read-file --args '{"space":"documents","path":"../etc/passwd"}' || echo "(exit $?)"
chat='what is 17 * 23 + 4
/why
extract the text of the pdf papers/bm25.pdf in documents
/quit'
printf '\n\033[1m$ printf %s | airs chat --model none\033[0m\n' "'${chat//$'\n'/\\n}\\n'"
printf '%s\n' "$chat" | "$airs" chat --model none || true
run run chains/examples/compare-pricing.yaml --input a=quotes/acme-2024.pdf --input b=quotes/acme-2025.pdf
run run chains/examples/summarize-papers.yaml --input dir=papers
run audit verify

cat <<END

The demo's files are kept in $work:
  documents/   the sample PDFs (quotes/, papers/)
  airs.yaml    the configuration the demo ran with
  state/       its audit log and recorded sessions
Run more commands against them:  export AIRS_CONFIG=$work/airs.yaml AIRS_HOME=$work/state
Remove them:                     rm -rf $work
END
