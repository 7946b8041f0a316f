// Writes the encoder's vector of each text: IN has one JSON string per
// line (`airs train retrieval --teacher-texts`), OUT gets {"t": text,
// "v": vector} per line, in IN's order. With SHARD/SHARDS only every
// SHARDS-th text from SHARD is embedded (run one process per core and
// concatenate the outputs in shard order).
// Usage: node embed.js IN OUT [SHARD SHARDS]
const fs = require("fs");
const { load, round } = require("./encoder");

(async () => {
  const [inp, out, shardArg, shardsArg] = process.argv.slice(2);
  if (!inp || !out) throw new Error("usage: node embed.js IN OUT [SHARD SHARDS]");
  const shard = Number(shardArg || 0), shards = Number(shardsArg || 1);
  const texts = fs.readFileSync(inp, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
    .filter((_, i) => i % shards === shard);
  const m = await load();
  // Batches of texts of like length: the encoder pads a batch to its longest.
  const order = texts.map((_, i) => i).sort((a, b) => texts[a].length - texts[b].length || a - b);
  const vecs = new Array(texts.length);
  const start = Date.now();
  for (let i = 0; i < order.length; i += 32) {
    const idx = order.slice(i, i + 32);
    const vs = await m.embed(idx.map((k) => texts[k]));
    idx.forEach((k, j) => { vecs[k] = round(vs[j]); });
    if (i % 3200 === 0) console.error(`shard ${shard}: ${i}/${texts.length} (${Math.round((Date.now() - start) / 1000)} s)`);
  }
  fs.writeFileSync(out, texts.map((t, i) => JSON.stringify({ t, v: vecs[i] })).join("\n") + "\n");
  console.error(`wrote ${out} (${texts.length} texts)`);
})().catch((e) => { console.error(e.message || e); process.exit(1); });
