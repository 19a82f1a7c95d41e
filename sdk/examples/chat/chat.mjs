// The chat demo's client: the official `openai` npm package talking to `xonnx serve`, one
// conversation of several turns, each answer streamed to stdout as it arrives. Every turn sends
// the whole conversation again (as chat clients do); the server reuses the KV cache of the
// earlier turns, which the usage line shows as cached prompt tokens.
//   node chat.mjs --modules DIR --base URL --model ID [--max-tokens N] [--temperature T]
//                 [--transcript FILE] QUESTION...
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const options = { 'max-tokens': '64', temperature: '0.7', seed: '7' };
const questions = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i].startsWith('--')) options[argv[i].slice(2)] = argv[++i];
  else questions.push(argv[i]);
}
if (!options.modules || !options.base || !options.model || questions.length === 0) {
  console.error('usage: chat.mjs --modules DIR --base URL --model ID [--max-tokens N] QUESTION...');
  process.exit(2);
}
const require = createRequire(options.modules + '/');
const OpenAI = require('openai').default ?? require('openai');
const client = new OpenAI({ baseURL: options.base, apiKey: options['api-key'] ?? 'unused', maxRetries: 0 });

const messages = [{ role: 'system', content: 'You are a helpful assistant running on this device.' }];
const transcript = [];
for (const question of questions) {
  messages.push({ role: 'user', content: question });
  process.stdout.write(`\n> ${question}\n`);
  const stream = await client.chat.completions.create({
    model: options.model, messages, stream: true, stream_options: { include_usage: true },
    max_tokens: Number(options['max-tokens']), temperature: Number(options.temperature),
    seed: Number(options.seed),
  });
  let answer = '';
  let usage = null;
  let finish = null;
  let timings = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    if (chunk.timings) timings = chunk.timings;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const text = choice.delta?.content ?? '';
    answer += text;
    process.stdout.write(text);
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  process.stdout.write('\n');
  if (!usage || !finish) throw new Error('the stream ended without usage or finish_reason');
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const rate = timings?.predicted_per_second;
  console.error(`[chat] ${usage.prompt_tokens} prompt tokens (${cached} from the KV cache), ` +
                `${usage.completion_tokens} generated, finish ${finish}` +
                (rate ? `, ${Number(rate).toFixed(1)} tokens/s` : ''));
  messages.push({ role: 'assistant', content: answer });
  transcript.push({ question, answer, finish_reason: finish, usage });
}
if (options.transcript) writeFileSync(options.transcript, JSON.stringify(transcript, null, 2) + '\n');
