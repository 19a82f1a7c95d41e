// Load test of `xonnx serve` (bench/serve/run.sh starts the server): N clients x M requests on
// loopback, mixing streamed chat, plain chat, json_schema output, clients that disconnect
// mid-stream, and bad requests. Reports failures, p50 / p99 latency, time to first token,
// aggregate completion tokens/s, json_schema validity, and the server's RSS after each round.
//   node load.mjs --base http://127.0.0.1:PORT --model NAME --pid PID [--clients 8] [--requests 25] [--rounds 3]
import { readFileSync } from 'node:fs';

const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, a, i, all) => {
  if (a.startsWith('--')) pairs.push([a.slice(2), all[i + 1]]);
  return pairs;
}, []));
const base = args.base;
const model = args.model;
const clients = Number(args.clients ?? 8);
const perClient = Number(args.requests ?? 25);
const rounds = Number(args.rounds ?? 3);
const maxTokens = Number(args['max-tokens'] ?? 48);

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 12 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    tags: { type: 'array', items: { enum: ['a', 'b', 'c'] }, maxItems: 3 },
  },
  required: ['name', 'age', 'tags'],
  additionalProperties: false,
};
const valid = (v) => v && typeof v === 'object' && !Array.isArray(v) &&
  Object.keys(v).sort().join() === 'age,name,tags' && typeof v.name === 'string' && [...v.name].length <= 12 &&
  Number.isInteger(v.age) && v.age >= 0 && v.age <= 120 && Array.isArray(v.tags) && v.tags.length <= 3 &&
  v.tags.every((t) => ['a', 'b', 'c'].includes(t));

const prompts = ['Tell me a story.', 'What is the weather like?', 'Say something wise.', 'Describe a cat.'];
const rssMiB = () => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${args.pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

async function post(body, signal) {
  return fetch(`${base}/v1/chat/completions`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal,
  });
}

// One request of the given kind; returns {ok, latency, ttft, tokens, kind, schemaValid}.
async function one(kind, i) {
  const messages = [{ role: 'user', content: prompts[i % prompts.length] }];
  const start = performance.now();
  const body = { model, messages, max_tokens: maxTokens, temperature: 0.8, seed: i };
  if (kind === 'bad') {
    const r = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"model":' });
    await r.text();
    return { kind, ok: r.status === 400, latency: performance.now() - start };
  }
  if (kind === 'schema') {
    body.max_tokens = 200;
    body.response_format = { type: 'json_schema', json_schema: { name: 'p', schema } };
    const r = await post(body);
    const j = await r.json();
    if (r.status !== 200) return { kind, ok: false, latency: performance.now() - start, error: JSON.stringify(j) };
    let parsed = null;
    try { parsed = JSON.parse(j.choices[0].message.content); } catch { parsed = null; }
    return { kind, ok: true, latency: performance.now() - start, tokens: j.usage.completion_tokens,
             ttft: j.timings.first_token_ms, schemaValid: valid(parsed), finish: j.choices[0].finish_reason };
  }
  if (kind === 'chat') {
    const r = await post(body);
    const j = await r.json();
    if (r.status !== 200) return { kind, ok: false, latency: performance.now() - start, error: JSON.stringify(j) };
    return { kind, ok: true, latency: performance.now() - start, tokens: j.usage.completion_tokens, ttft: j.timings.first_token_ms };
  }
  // stream / disconnect
  const abort = new AbortController();
  body.stream = true;
  body.stream_options = { include_usage: true };
  const r = await post(body, abort.signal);
  if (r.status !== 200) return { kind, ok: false, latency: performance.now() - start, error: await r.text() };
  const decoder = new TextDecoder();
  let buffer = '', ttft = null, tokens = 0, done = false, chunks = 0;
  try {
    for await (const part of r.body) {
      buffer += decoder.decode(part, { stream: true });
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const line = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        if (!line.startsWith('data: ')) continue;
        const data = line.slice(6);
        if (data === '[DONE]') { done = true; continue; }
        const j = JSON.parse(data);
        if (j.usage) tokens = j.usage.completion_tokens;
        if (j.choices?.[0]?.delta?.content) {
          if (ttft === null) ttft = performance.now() - start;
          ++chunks;
        }
      }
      if (kind === 'disconnect' && chunks >= 2) { abort.abort(); break; }
    }
  } catch (e) {
    if (kind !== 'disconnect') return { kind, ok: false, latency: performance.now() - start, error: String(e) };
  }
  if (kind === 'disconnect') return { kind, ok: true, latency: performance.now() - start, ttft };
  return { kind, ok: done, latency: performance.now() - start, ttft, tokens };
}

const kinds = ['stream', 'chat', 'schema', 'stream', 'chat', 'disconnect', 'stream', 'bad'];
const pct = (xs, p) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const results = [];
for (let round = 1; round <= rounds; ++round) {
  const start = performance.now();
  const all = await Promise.all(Array.from({ length: clients }, async (_, c) => {
    const out = [];
    for (let k = 0; k < perClient; ++k) {
      const i = c * perClient + k;
      out.push(await one(kinds[(c + k) % kinds.length], i + round * 1000));
    }
    return out;
  }));
  const wall = (performance.now() - start) / 1000;
  const flat = all.flat();
  const valid = flat.filter((r) => r.kind !== 'disconnect' && r.kind !== 'bad');
  const failed = flat.filter((r) => !r.ok);
  const tokens = valid.reduce((n, r) => n + (r.tokens ?? 0), 0);
  const schemaRuns = flat.filter((r) => r.kind === 'schema' && r.ok);
  const schemaOk = schemaRuns.filter((r) => r.schemaValid).length;
  const ttfts = flat.filter((r) => r.ttft != null && r.kind !== 'disconnect').map((r) => r.ttft);
  const lat = valid.map((r) => r.latency);
  const row = {
    round, requests: flat.length, failed: failed.length, wall_s: +wall.toFixed(1),
    p50_ms: +pct(lat, 0.5).toFixed(0), p99_ms: +pct(lat, 0.99).toFixed(0),
    ttft_p50_ms: +pct(ttfts, 0.5).toFixed(0), ttft_p99_ms: +pct(ttfts, 0.99).toFixed(0),
    tok_per_s: +(tokens / wall).toFixed(1), schema_ok: schemaOk, schema_runs: schemaRuns.length,
    rss_mib: +rssMiB().toFixed(1),
  };
  results.push(row);
  console.log(JSON.stringify(row));
  for (const f of failed.slice(0, 3)) console.error('failed:', JSON.stringify(f));
}
const bad = results.some((r) => r.failed > 0 || r.schema_ok < r.schema_runs);
process.exit(bad ? 1 : 0);
