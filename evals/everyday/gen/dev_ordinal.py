# Development requests of three kinds added after the first 383 (the file
# holds the first 383, then what this appends): a listing
# of a kind of file (everywhere under the folder), an ordinal over files,
# and a question about a named document's content. Appended to
# ../testdata/dev.jsonl (or to the file given).
import json, sys
from cases import *
c("list_typed","list the pdfs in my documents", lst(D, pattern="*.pdf", recursive=True))
c("list_typed","show me all the text files in documents", lst(D, pattern="*.txt", recursive=True))
c("list_typed","what csv files do I have in documents", lst(D, pattern="*.csv", recursive=True))
c("list","list the files in my documents folder, top level only", lst(D))
c("ordinal","summarize the first paper", sumf((D,"papers/attention.pdf")))
c("ordinal","read the last paper", [px(D,"papers/grammars.pdf")])
c("ordinal","open the latest lease", [rf(D,"contracts/lease-2024.txt")])
c("ordinal","extract the oldest acme quote", [px(D,"quotes/acme-2024.pdf")])
c("ordinal","summarize the third paper in the papers folder", sumf((D,"papers/grammars.pdf")))
c("ordinal","read the second recipe", [rf(D,"recipes/pancakes.md")])
c("ordinal","open the first file in the notes folder", [rf(D,"notes/ideas.md")])
c("ordinal","summarize the most recent quote", sumf((D,"quotes/acme-2025.pdf")))
c("ordinal","delete the oldest lease", dele(D,"contracts/lease-2023.txt"))
c("content_question","what does the 2025 quote cost for the pro plan", [px(D,"quotes/acme-2025.pdf")])
c("content_question","how much is the deposit in the 2023 lease", [rf(D,"contracts/lease-2023.txt")])
c("content_question","what's the price of the starter plan in the 2024 acme quote", [px(D,"quotes/acme-2024.pdf")])
c("content_question","when does the 2024 lease end", [rf(D,"contracts/lease-2024.txt")])
c("content_question","how long is the term of the 2023 lease", [rf(D,"contracts/lease-2023.txt")])
c("content_question","what does the quote cost for enterprise", choices=["documents:quotes/acme-2024.pdf","documents:quotes/acme-2025.pdf"])
c("content_question","who is the cover letter addressed to", [rf(D,"letters/cover-letter.txt")])
c("content_question","in the 2025 quote, what does the pro plan cost", [px(D,"quotes/acme-2025.pdf")])
c("content_question","what does acme charge for storage in 2025", [px(D,"quotes/acme-2025.pdf")])
c("content_question","how many eggs go in the pancakes", [rf(D,"recipes/pancakes.md")])
c("content_question","what is the deposit on the lease from 2024", [rf(D,"contracts/lease-2024.txt")])
c("ordinal","compare the first and the last paper", cmp2((D,"papers/attention.pdf"),(D,"papers/grammars.pdf")))
c("ordinal","compare the oldest and the newest acme quote", cmp2((D,"quotes/acme-2024.pdf"),(D,"quotes/acme-2025.pdf")))
c("ordinal","diff the newest lease with the oldest one", cmp2((D,"contracts/lease-2024.txt"),(D,"contracts/lease-2023.txt")))
with open(sys.argv[1] if len(sys.argv) > 1 else "../testdata/dev.jsonl","a") as f:
    for d in out: f.write(json.dumps(d)+"\n")
print(len(out))
