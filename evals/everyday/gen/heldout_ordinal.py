# Held-out requests of three kinds added after the first 91: a listing of a
# kind of file (everywhere under the folder), an ordinal over files ("the
# second paper", "the newest quote"), and a question about a named
# document's content (its reading is planned). Written before the rules
# that plan them; appended to ../testdata/heldout.jsonl, never tuned on.
import json
from cases import *
c("list_typed","which markdown files are in my documents", lst(D, pattern="*.md", recursive=True))
c("list_typed","show me the pdf files in documents", lst(D, pattern="*.pdf", recursive=True))
c("ordinal","read the second paper", [px(D,"papers/bm25.pdf")])
c("ordinal","summarize the newest acme quote", sumf((D,"quotes/acme-2025.pdf")))
c("ordinal","open the oldest lease", [rf(D,"contracts/lease-2023.txt")])
c("ordinal","extract the last pdf in the papers folder", [px(D,"papers/grammars.pdf")])
c("content_question","how much is the pro plan in the 2024 acme quote", [px(D,"quotes/acme-2024.pdf")])
c("content_question","what's the monthly rent in the 2024 lease", [rf(D,"contracts/lease-2024.txt")])
c("content_question","what is the storage price in the 2025 quote", [px(D,"quotes/acme-2025.pdf")])
with open("../testdata/heldout.jsonl","a") as f:
    for d in out: f.write(json.dumps(d)+"\n")
print(len(out))
