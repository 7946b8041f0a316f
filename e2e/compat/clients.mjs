// The official OpenAI and Ollama JavaScript clients against airs serve's
// compatible endpoints. e2e/compat_test.go installs the pinned packages
// (package.json, package-lock.json: npm ci), runs this program and checks what it prints: one JSON
// object, each scenario's outcome as the client saw it.
//
// Env: AIRS_URL (http://127.0.0.1:PORT), AIRS_TOKEN, AIRS_MODEL, AIRS_TOOLS
// (a JSON file of OpenAI-style tools).
import fs from "node:fs";
import OpenAI from "openai";
import { Ollama } from "ollama";

const base = process.env.AIRS_URL;
const token = process.env.AIRS_TOKEN;
const model = process.env.AIRS_MODEL;
const tools = JSON.parse(fs.readFileSync(process.env.AIRS_TOOLS, "utf8"));
const ask = "What is the weather forecast in Paris today?";
// AIRS_MAX_TOKENS bounds every generation (max_tokens, num_predict): the
// tiny random model would otherwise write until the server's limit.
const maxTokens = process.env.AIRS_MAX_TOKENS ? Number(process.env.AIRS_MAX_TOKENS) : undefined;
const oaiLimit = maxTokens ? { max_tokens: maxTokens } : {};
const olLimit = maxTokens ? { options: { num_predict: maxTokens } } : {};

const openai = new OpenAI({ baseURL: base + "/v1", apiKey: token, maxRetries: 0 });
const ollama = new Ollama({ host: base, headers: { Authorization: "Bearer " + token } });

const calls = (msg) =>
  (msg.tool_calls || []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));

// Several things asked in one request: several calls (parallel_tool_calls
// is not false).
const askTwo = "What is the weather in Paris and in Rome?";

// memo answers a request once per run: scenarios that send the very same
// request (a call, then the conversation that continues from it) share
// its reply, as a client would.
const memos = new Map();
const memo = (key, f) => {
  if (!memos.has(key)) memos.set(key, f());
  return memos.get(key);
};

async function openaiCall(extra = {}, content = ask) {
  const { data: r, response } = await openai.chat.completions
    .create({ model, tools, messages: [{ role: "user", content }], ...oaiLimit, ...extra })
    .withResponse();
  const ch = r.choices[0];
  return { calls: calls(ch.message), content: ch.message.content, finish: ch.finish_reason, mode: response.headers.get("x-airs-mode") };
}

async function openaiStream(content = ask, extra = {}) {
  // The client's own stream helper assembles the deltas.
  const stream = openai.chat.completions.stream({ model, tools, messages: [{ role: "user", content }], ...oaiLimit, ...extra });
  const r = await stream.finalChatCompletion();
  const ch = r.choices[0];
  return { calls: calls(ch.message), content: ch.message.content, finish: ch.finish_reason };
}

// The schema of the structured answers (response_format, format): the
// test validates the content against it (it is printed with the outcome).
const answerSchema = {
  type: "object",
  properties: {
    city: { type: "string", maxLength: 24 },
    temp_c: { type: "integer", minimum: -60, maximum: 60 },
    sky: { enum: ["sunny", "cloudy", "rain"] },
  },
  required: ["city", "temp_c", "sky"],
  additionalProperties: false,
};
const askJSON = "It is 18 degrees and sunny in Paris today. Reply with the weather as an object (city, temp_c, sky).";

async function openaiJSONSchema() {
  const r = await openai.chat.completions.create({
    model,
    messages: [{ role: "user", content: askJSON }],
    response_format: { type: "json_schema", json_schema: { name: "weather", strict: true, schema: answerSchema } },
    ...oaiLimit,
  });
  const ch = r.choices[0];
  return { content: ch.message.content, finish: ch.finish_reason, schema: answerSchema };
}

async function ollamaFormat() {
  const r = await ollama.chat({ model, messages: [{ role: "user", content: askJSON }], format: answerSchema, stream: false, ...olLimit });
  return { content: r.message.content, done: r.done, schema: answerSchema };
}

async function openaiContinue() {
  const messages = [{ role: "user", content: ask }];
  const first = await openai.chat.completions.create({ model, tools, messages, tool_choice: "required", ...oaiLimit });
  const msg = first.choices[0].message;
  messages.push(msg);
  for (const c of msg.tool_calls) {
    messages.push({ role: "tool", tool_call_id: c.id, content: JSON.stringify({ temp_c: 18, sky: "sunny" }) });
  }
  const second = await openai.chat.completions.create({ model, tools, messages, ...oaiLimit });
  const ch = second.choices[0];
  return { first: calls(msg), calls: calls(ch.message), content: ch.message.content, finish: ch.finish_reason };
}

async function openaiBadKey() {
  const bad = new OpenAI({ baseURL: base + "/v1", apiKey: "not-a-token", maxRetries: 0 });
  try {
    await bad.chat.completions.create({ model, messages: [{ role: "user", content: ask }] });
    return { raised: false };
  } catch (e) {
    return { raised: true, auth: e instanceof OpenAI.AuthenticationError, status: e.status, name: e.constructor.name, message: e.message };
  }
}

async function openaiModels() {
  const ids = [];
  for await (const m of openai.models.list()) ids.push(m.id);
  return { ids };
}

const olCalls = (msg) =>
  (msg.tool_calls || []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));

const ollamaFirst = (content) =>
  memo("ollama:" + content, () => ollama.chat({ model, tools, messages: [{ role: "user", content }], stream: false, ...olLimit }));

async function ollamaCall(content = ask) {
  const r = await ollamaFirst(content);
  return { calls: olCalls(r.message), content: r.message.content, done: r.done };
}

async function ollamaStream(content = ask) {
  const out = { calls: [], content: "", done: false };
  for await (const part of await ollama.chat({ model, tools, messages: [{ role: "user", content }], stream: true, ...olLimit })) {
    out.content += part.message.content || "";
    out.calls.push(...olCalls(part.message));
    out.done = out.done || part.done;
  }
  return out;
}

async function ollamaContinue() {
  const messages = [{ role: "user", content: ask }];
  const first = await ollamaFirst(ask);
  messages.push(first.message);
  for (const c of first.message.tool_calls || []) {
    messages.push({ role: "tool", tool_name: c.function.name, content: JSON.stringify({ temp_c: 18, sky: "sunny" }) });
  }
  const second = await ollama.chat({ model, tools, messages, stream: false, ...olLimit });
  return { first: (first.message.tool_calls || []).map((c) => c.function.name), content: second.message.content,
    calls: (second.message.tool_calls || []).map((c) => ({ name: c.function.name, arguments: c.function.arguments })) };
}

async function ollamaBadKey() {
  const bad = new Ollama({ host: base, headers: { Authorization: "Bearer not-a-token" } });
  try {
    await bad.chat({ model, messages: [{ role: "user", content: ask }], stream: false });
    return { raised: false };
  } catch (e) {
    return { raised: true, status: e.status_code, name: e.name, message: e.error || e.message };
  }
}

async function ollamaListings() {
  const tags = await ollama.list();
  return { models: tags.models.map((m) => m.name) };
}

async function openaiAIRS() {
  // AIRS's own tools, run server-side through the pipeline.
  const r = await openai.chat.completions.create({ model: "airs", messages: [{ role: "user", content: "calculate 12 * 12" }] });
  const ch = r.choices[0];
  return { calls: calls(ch.message), content: ch.message.content, finish: ch.finish_reason };
}

const scenarios = {
  openai_call: () => openaiCall(),
  openai_stream: openaiStream,
  openai_none: () => openaiCall({ tool_choice: "none" }),
  openai_required: () => openaiCall({ tool_choice: "required" }, "Hello there"),
  openai_named: () => openaiCall({ tool_choice: { type: "function", function: { name: "get_time_zone" } } }),
  openai_required_stream: () => openaiStream(ask, { tool_choice: "required" }),
  openai_json_schema: openaiJSONSchema,
  ollama_format: ollamaFormat,
  openai_serial: () => openaiCall({ parallel_tool_calls: false }),
  openai_parallel: () => openaiCall({}, askTwo),
  openai_parallel_stream: () => openaiStream(askTwo),
  openai_parallel_serial: () => openaiCall({ parallel_tool_calls: false }, askTwo),
  ollama_parallel: () => ollamaCall(askTwo),
  ollama_parallel_stream: () => ollamaStream(askTwo),
  openai_continue: openaiContinue,
  openai_bad_key: openaiBadKey,
  openai_models: openaiModels,
  openai_airs: openaiAIRS,
  ollama_call: ollamaCall,
  ollama_stream: ollamaStream,
  ollama_continue: ollamaContinue,
  ollama_bad_key: ollamaBadKey,
  ollama_list: ollamaListings,
};

const only = process.argv.slice(2);
const out = {};
for (const [name, run] of Object.entries(scenarios)) {
  if (only.length && !only.includes(name)) continue;
  try {
    out[name] = await run();
  } catch (e) {
    out[name] = { error: String(e && e.stack || e) };
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
