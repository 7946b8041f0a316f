# Development requests that name a file as where the result goes (added
# with the rule that such a file is not read and need not exist): the
# source is read and summarized; the destination is neither read nor
# looked up. Appended to ../testdata/dev.jsonl (or to the file given).
import json, sys
from cases import *
c("destination","summarize papers/bm25.pdf and save it as bm25-summary.md", sumf((D,"papers/bm25.pdf")))
c("destination","save the summary of the 2025 acme quote to quote-notes.md", sumf((D,"quotes/acme-2025.pdf")))
c("destination","read draft.txt and write it to draft-copy.txt", [rf(D,"draft.txt")])
c("offtopic","make a new file called shopping.txt")
with open(sys.argv[1] if len(sys.argv) > 1 else "../testdata/dev.jsonl","a") as f:
    for d in out: f.write(json.dumps(d)+"\n")
print(len(out))
