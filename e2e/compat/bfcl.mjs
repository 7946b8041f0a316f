// BFCL questions sent through airs serve's OpenAI-compatible endpoint by
// the official client (cmd/airs/compat_bfcl_test.go scores the answers
// with AIRS's BFCL checker).
//
// Env: AIRS_URL, AIRS_TOKEN, AIRS_MODEL; argv: the questions (JSON lines:
// id, text, tools) and the answers file to write (JSON lines: id, calls).
import fs from "node:fs";
import OpenAI from "openai";

const [inPath, outPath] = process.argv.slice(2);
const openai = new OpenAI({ baseURL: process.env.AIRS_URL + "/v1", apiKey: process.env.AIRS_TOKEN, maxRetries: 0 });
const lines = fs.readFileSync(inPath, "utf8").split("\n").filter(Boolean);
const out = [];
for (const line of lines) {
  const q = JSON.parse(line);
  try {
    const r = await openai.chat.completions.create({
      model: process.env.AIRS_MODEL,
      messages: [{ role: "user", content: q.text }],
      tools: q.tools.map((t) => ({ type: "function", function: t })),
    });
    const calls = (r.choices[0].message.tool_calls || []).map((c) => ({ name: c.function.name, arguments: c.function.arguments }));
    out.push(JSON.stringify({ id: q.id, calls }));
  } catch (e) {
    out.push(JSON.stringify({ id: q.id, error: String(e) }));
  }
}
fs.writeFileSync(outPath, out.join("\n") + "\n");
