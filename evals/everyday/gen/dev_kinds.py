# Development requests for kinds of file a person names by one word
# (spreadsheets, photos, presentations: several file types at once, listed
# with one {a,b} pattern), added with that rule. Appended to
# ../testdata/dev.jsonl (or to the file given).
import json, sys
from cases import *
SHEETS = "*.{xlsx,xls,ods,csv,tsv}"
IMAGES = "*.{png,jpg,jpeg,gif,webp,heic,bmp,tif,tiff,svg}"
SLIDES = "*.{pptx,ppt,odp,key}"
c("list_typed","list the spreadsheets in documents", lst(D, pattern=SHEETS, recursive=True))
c("list_typed","which spreadsheets do I have in my documents", lst(D, pattern=SHEETS, recursive=True))
c("list_typed","show me the photos in documents", lst(D, pattern=IMAGES, recursive=True))
c("list_typed","list all images in projects", lst(P, pattern=IMAGES, recursive=True))
c("list_typed","what presentations are in documents", lst(D, pattern=SLIDES, recursive=True))
c("ordinal","open the first spreadsheet in documents", [rf(D,"budget.csv")])
with open(sys.argv[1] if len(sys.argv) > 1 else "../testdata/dev.jsonl","a") as f:
    for d in out: f.write(json.dumps(d)+"\n")
print(len(out))
