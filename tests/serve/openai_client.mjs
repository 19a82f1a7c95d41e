// The official openai npm client against `xonnx serve` (started by openai_client.sh):
// models list, chat, streaming with usage, json_schema output that parses and validates,
// embeddings (the client's default base64 transfer, float, dimensions, token ids) equal to
// the encoder's numpy ground truth, and errors surfacing as the client's typed exceptions.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';

const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, a, i, all) => {
  if (a.startsWith('--')) pairs.push([a.slice(2), all[i + 1]]);
  return pairs;
}, []));
const require = createRequire(args.modules + '/');
const OpenAI = require('openai').default ?? require('openai');
const { VERSION } = require('openai/version');
const client = new OpenAI({ baseURL: args.base, apiKey: args.key, maxRetries: 0 });

const models = await client.models.list();
const ids = models.data.map((m) => m.id);
assert.deepEqual(ids, ['genai_int4', 'tiny_encoder']);
const model = ids[0];

const chat = await client.chat.completions.create({
  model, messages: [{ role: 'user', content: 'Tell me a story.' }], max_tokens: 16, temperature: 0,
});
assert.equal(chat.object, 'chat.completion');
assert.equal(chat.choices[0].message.role, 'assistant');
assert.ok(chat.choices[0].message.content.length > 0, 'empty reply');
assert.ok(['stop', 'length'].includes(chat.choices[0].finish_reason));
assert.ok(chat.usage.prompt_tokens > 0 && chat.usage.completion_tokens > 0);
assert.equal(chat.usage.total_tokens, chat.usage.prompt_tokens + chat.usage.completion_tokens);

// Greedy streaming gives the same text as the non-streamed answer.
const stream = await client.chat.completions.create({
  model, messages: [{ role: 'user', content: 'Tell me a story.' }], max_tokens: 16, temperature: 0,
  stream: true, stream_options: { include_usage: true },
});
let streamed = '';
let usage = null;
let finish = null;
for await (const chunk of stream) {
  if (chunk.usage) usage = chunk.usage;
  for (const c of chunk.choices) {
    streamed += c.delta?.content ?? '';
    if (c.finish_reason) finish = c.finish_reason;
  }
}
assert.equal(streamed, chat.choices[0].message.content);
assert.equal(finish, chat.choices[0].finish_reason);
assert.equal(usage.completion_tokens, chat.usage.completion_tokens);

const completion = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 8, temperature: 0 });
assert.equal(completion.object, 'text_completion');
assert.equal(typeof completion.choices[0].text, 'string');

// Structured output: whatever the tiny model's weights prefer, the text parses and validates.
const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 12 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    mood: { enum: ['happy', 'sad', 'calm'] },
  },
  required: ['name', 'age', 'mood'],
  additionalProperties: false,
};
for (const seed of [1, 2, 3]) {
  const r = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'Describe a person as JSON.' }], temperature: 1, seed, max_tokens: 200,
    response_format: { type: 'json_schema', json_schema: { name: 'person', schema, strict: true } },
  });
  const text = r.choices[0].message.content;
  const value = JSON.parse(text);
  assert.deepEqual(Object.keys(value).sort(), ['age', 'mood', 'name'], text);
  assert.ok(typeof value.name === 'string' && [...value.name].length <= 12, text);
  assert.ok(Number.isInteger(value.age) && value.age >= 0 && value.age <= 120, text);
  assert.ok(['happy', 'sad', 'calm'].includes(value.mood), text);
  assert.equal(r.choices[0].finish_reason, 'stop');
}
// json_object bounds no string's length: a rambling model may hit max_tokens inside one, and
// then (as with OpenAI) the text is a cut-off object: finish_reason says so.
for (const seed of [5, 6]) {
  const object = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'JSON please.' }], max_tokens: 64, temperature: 0.8, seed,
    response_format: { type: 'json_object' },
  });
  const text = object.choices[0].message.content;
  if (object.choices[0].finish_reason === 'stop') assert.equal(typeof JSON.parse(text), 'object', text);
  else assert.ok(object.choices[0].finish_reason === 'length' && text.trimStart().startsWith('{'), text);
}

// Embeddings: the client asks for base64 unless told otherwise and decodes it itself; the
// vectors equal the numpy forward pass of the encoder's weights (make_tiny_encoder.py).
const expected = JSON.parse(readFileSync(args.expected, 'utf8'));
const closeTo = (got, want, what) => {
  assert.equal(got.length, want.length, what);
  got.forEach((v, i) => assert.ok(Math.abs(v - want[i]) < 2e-5, `${what}[${i}]: ${v} vs ${want[i]}`));
};
const tokenInputs = expected.cases.map((c) => c.input);
for (const encoding_format of [undefined, 'float']) {
  const e = await client.embeddings.create({ model: 'tiny_encoder', input: tokenInputs, encoding_format });
  assert.equal(e.object, 'list');
  assert.equal(e.data.length, tokenInputs.length);
  e.data.forEach((d, i) => closeTo(d.embedding, expected.cases[i].embedding, `${encoding_format ?? 'default'} ${i}`));
  assert.equal(e.usage.prompt_tokens, tokenInputs.flat().length);
}
const texts = await client.embeddings.create({ model: 'tiny_encoder', input: ['hello world', 'hello'], dimensions: 8 });
assert.equal(texts.data.length, 2);
texts.data.forEach((d) => {
  assert.equal(d.embedding.length, 8);
  assert.ok(Math.abs(Math.hypot(...d.embedding) - 1) < 1e-5, 'a shortened vector is normalized again');
});
const single = await client.embeddings.create({ model: 'tiny_encoder', input: 'hello world' });
closeTo(single.data[0].embedding.slice(0, 8).map((v, _, a) => v / Math.hypot(...a)), texts.data[0].embedding, 'dimensions 8');
await assert.rejects(client.embeddings.create({ model, input: 'x' }),
  (e) => e instanceof OpenAI.BadRequestError && e.param === 'model');
await assert.rejects(client.embeddings.create({ model: 'tiny_encoder', input: '' }),
  (e) => e instanceof OpenAI.BadRequestError && e.param === 'input');

// Errors come back as the client's typed errors, with OpenAI's status and fields.
await assert.rejects(
  client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
  (e) => e instanceof OpenAI.NotFoundError && e.status === 404 && e.code === 'model_not_found');
await assert.rejects(
  client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }], n: 3 }),
  (e) => e instanceof OpenAI.BadRequestError && e.param === 'n');
await assert.rejects(
  client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'x' }],
    response_format: { type: 'json_schema', json_schema: { name: 'bad', schema: { type: 'object', properties: { a: { type: 'strin' } } } } },
  }),
  (e) => e instanceof OpenAI.BadRequestError && /properties\/a/.test(e.message));
const wrongKey = new OpenAI({ baseURL: args.base, apiKey: 'wrong', maxRetries: 0 });
await assert.rejects(wrongKey.models.list(), (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);

console.log(`[serve-openai] openai ${VERSION}: models, chat, stream, completions, ` +
  `json_schema x3, json_object, embeddings (base64, float, dimensions, 2 errors), 4 error cases ok`);
