// LangChain's JS chat models (@langchain/openai's ChatOpenAI,
// @langchain/ollama's ChatOllama) against airs serve's compatible
// endpoints, the way an agent built on LangChain uses them: the 50 tools
// bound with bindTools, the model's tool_calls read back, the result sent
// as a ToolMessage. e2e/compat_test.go runs it like clients.mjs and checks
// what it prints (one JSON object: each scenario's outcome).
//
// Env: AIRS_URL, AIRS_TOKEN, AIRS_MODEL, AIRS_TOOLS, AIRS_MAX_TOKENS as for
// clients.mjs.
import fs from "node:fs";
import { ChatOpenAI } from "@langchain/openai";
import { ChatOllama } from "@langchain/ollama";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";

const base = process.env.AIRS_URL;
const token = process.env.AIRS_TOKEN;
const model = process.env.AIRS_MODEL;
const tools = JSON.parse(fs.readFileSync(process.env.AIRS_TOOLS, "utf8"));
const maxTokens = process.env.AIRS_MAX_TOKENS ? Number(process.env.AIRS_MAX_TOKENS) : undefined;
const ask = "What is the weather forecast in Paris today?";
const result = JSON.stringify({ temp_c: 18, sky: "sunny" });

const openai = (apiKey = token) =>
  new ChatOpenAI({ model, apiKey, maxRetries: 0, maxTokens, configuration: { baseURL: base + "/v1" } });
const ollama = () =>
  new ChatOllama({ model, baseUrl: base, headers: { Authorization: "Bearer " + token }, numPredict: maxTokens });

// LangChain's calls carry parsed arguments (an object).
const calls = (msg) => (msg.tool_calls || []).map((c) => ({ id: c.id, name: c.name, arguments: c.args }));

// memo: the scenarios that continue a conversation reuse its first reply.
const memos = new Map();
const memo = (key, f) => {
  if (!memos.has(key)) memos.set(key, f());
  return memos.get(key);
};

const openaiFirst = () => memo("openai", () => openai().bindTools(tools).invoke([new HumanMessage(ask)]));
// tool_choice "any" (LangChain's name for OpenAI's "required"): a call to
// continue from, whatever the model.
const openaiForced = () =>
  memo("openai-any", () => openai().bindTools(tools, { tool_choice: "any" }).invoke([new HumanMessage(ask)]));
const ollamaFirst = () => memo("ollama", () => ollama().bindTools(tools).invoke([new HumanMessage(ask)]));

async function continueFrom(chat, first) {
  const ai = await first;
  const messages = [new HumanMessage(ask), ai];
  for (const c of ai.tool_calls || []) {
    messages.push(new ToolMessage({ tool_call_id: c.id, name: c.name, content: result }));
  }
  const next = await chat.bindTools(tools).invoke(messages);
  return { first: calls(ai), calls: calls(next), content: typeof next.content === "string" ? next.content : JSON.stringify(next.content) };
}

async function openaiStream() {
  // The chunks concatenated, as LangChain's streaming agents do.
  let acc;
  for await (const chunk of await openai().bindTools(tools).stream([new HumanMessage(ask)])) {
    acc = acc ? acc.concat(chunk) : chunk;
  }
  return { calls: calls(acc) };
}

async function openaiBadKey() {
  try {
    await openai("not-a-token").invoke([new HumanMessage(ask)]);
    return { raised: false };
  } catch (e) {
    return { raised: true, status: e.status, name: e.constructor.name, code: e.lc_error_code, message: e.message };
  }
}

const scenarios = {
  lc_openai_call: async () => ({ calls: calls(await openaiFirst()) }),
  lc_openai_stream: openaiStream,
  lc_openai_named: async () => ({
    calls: calls(await openai().bindTools(tools, { tool_choice: "get_time_zone" }).invoke([new HumanMessage(ask)])),
  }),
  lc_openai_continue: () => continueFrom(openai(), openaiForced()),
  lc_openai_bad_key: openaiBadKey,
  lc_ollama_call: async () => ({ calls: calls(await ollamaFirst()) }),
  lc_ollama_continue: () => continueFrom(ollama(), ollamaFirst()),
};

const only = process.argv.slice(2);
const out = {};
for (const [name, run] of Object.entries(scenarios)) {
  if (only.length && !only.includes(name)) continue;
  try {
    out[name] = await run();
  } catch (e) {
    out[name] = { error: String((e && e.stack) || e) };
  }
}
process.stdout.write(JSON.stringify(out) + "\n");
