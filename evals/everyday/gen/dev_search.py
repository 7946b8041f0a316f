# Development requests that search a space or folder for a word or a kind of
# file (added with the rule that such a search lists the files whose names
# say the word, in any case: no tool reads inside every file). Appended to
# ../testdata/dev.jsonl (or to the file given).
import json, sys
from cases import *
c("search","search my documents for attention", lst(D, pattern="*{attention,Attention,ATTENTION}*", recursive=True))
c("search","look through the documents folder for lease", lst(D, pattern="*{lease,Lease,LEASE}*", recursive=True))
c("search","find the files named acme in documents", lst(D, pattern="*{acme,Acme,ACME}*", recursive=True))
c("ambiguous","find the files named acme", choices=["documents:","projects:"])
c("search","search my documents for spreadsheets", lst(D, pattern="*.{xlsx,xls,ods,csv,tsv}", recursive=True))
c("offtopic","search the web for cheap flights to rome")
with open(sys.argv[1] if len(sys.argv) > 1 else "../testdata/dev.jsonl","a") as f:
    for d in out: f.write(json.dumps(d)+"\n")
print(len(out))
