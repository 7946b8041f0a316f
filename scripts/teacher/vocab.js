// Writes the encoder's vocabulary as vocab.jsonl: per piece, in order,
// {"p": piece, "s": log-probability (null for the reserved pieces),
// "v": the encoder's vector of the piece alone}.
// Usage: node vocab.js OUT
const fs = require("fs");
const { load, embedIds, round } = require("./encoder");

(async () => {
  const out = process.argv[2];
  if (!out) throw new Error("usage: node vocab.js OUT");
  const m = await load();
  const voc = m.tokenizer.vocabulary;
  const lines = [];
  for (let i = 0; i < voc.length; i += 256) {
    const ids = [];
    for (let j = i; j < Math.min(voc.length, i + 256); j++) ids.push(j);
    const vs = await embedIds(m, ids);
    ids.forEach((id, k) => {
      const s = id < m.tokenizer.reservedSymbolsCount ? null : voc[id][1];
      lines.push(JSON.stringify({ p: voc[id][0], s, v: round(vs[k]) }));
    });
  }
  fs.writeFileSync(out, lines.join("\n") + "\n");
  console.error(`wrote ${out} (${voc.length} pieces)`);
})().catch((e) => { console.error(e.message || e); process.exit(1); });
