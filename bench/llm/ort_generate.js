#!/usr/bin/env node
// ONNX Runtime (onnxruntime-node, CPU) greedy generation over an ORT GenAI model folder: the ORT
// side of the LLM benchmark (issue 24 "Targets").
//
//   node bench/llm/ort_generate.js DIR [--threads N] [--prompt-len N | --prompt-ids 1,2,3]
//        [--tokens N] [--runs N] [--warmup N] [--dump-logits FILE] [--no-bind]
//   node bench/llm/ort_generate.js DIR --perplexity IDS.json [--window N]
//
// Runs DIR/genai_config.json's decoder as ORT GenAI does: with past_present_share_buffer true,
// past and present are the same max-length buffers ([1, kv_heads, search.max_length, head_size]),
// bound as both the past_key_values inputs and the present outputs (pre-allocated fetches), and
// attention_mask grows by one column per token; with false (or --no-bind), present is passed back
// as the next step's past. The prompt is --prompt-ids, or --prompt-len ids of a fixed pattern.
// Reports prefill time for the prompt, the median per-token decode time, tokens/s and the
// generated ids (medians over --runs timed runs after --warmup untimed ones); the last output line
// is one JSON object, with the CPU time per decode step and the load average (a shared machine's
// wall times mean little when the run got a fraction of a core). --dump-logits writes the float32 logits of every generated token's step
// ([tokens, vocab], raw little-endian) of the last run, for checks against PyTorch.
// --perplexity: IDS.json is a JSON array of token ids (or an object with heldout.token_ids, as
// tools/llm ground_truth.json); it is cut into non-overlapping windows of --window tokens (default
// 128), each run as one prefill from an empty cache, and every token but a window's first is scored.
// Prints the mean NLL and perplexity (JSON last line).
// onnxruntime-node is loaded from $XONNX_ORT_DIR/node_modules (default ~/.cache/xonnx-ort;
// bench/compare_ort.sh installs it).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

function usage(msg) {
  process.stderr.write(`error: ${msg}\nusage: ort_generate.js DIR [--threads N] [--prompt-len N | --prompt-ids a,b,c] ` +
    '[--tokens N] [--runs N] [--warmup N] [--dump-logits FILE] [--no-bind]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const opt = { dir: null, threads: 1, promptLen: 32, promptIds: null, tokens: 64, runs: 1, warmup: 1,
    dumpLogits: null, bind: true, perplexity: null, window: 128 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`));
    const count = (v, min) => {
      if (!/^[0-9]+$/.test(v) || Number(v) < min) usage(`${a} must be an integer >= ${min}, got '${v}'`);
      return Number(v);
    };
    if (a === '--threads') opt.threads = count(value(), 1);
    else if (a === '--prompt-len') opt.promptLen = count(value(), 1);
    else if (a === '--prompt-ids') {
      const v = value();
      opt.promptIds = v.split(',').map((x) => count(x, 0));
    } else if (a === '--tokens') opt.tokens = count(value(), 1);
    else if (a === '--runs') opt.runs = count(value(), 1);
    else if (a === '--warmup') opt.warmup = count(value(), 0);
    else if (a === '--dump-logits') opt.dumpLogits = value();
    else if (a === '--no-bind') opt.bind = false;
    else if (a === '--perplexity') opt.perplexity = value();
    else if (a === '--window') opt.window = count(value(), 2);
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else if (opt.dir === null) opt.dir = a;
    else usage(`unexpected argument ${a}`);
  }
  if (opt.dir === null) usage('missing DIR');
  return opt;
}

function loadOrt() {
  const dir = process.env.XONNX_ORT_DIR || path.join(os.homedir(), '.cache', 'xonnx-ort');
  try {
    return require(require.resolve('onnxruntime-node', { paths: [dir] }));
  } catch (e) {
    process.stderr.write(`error: cannot load onnxruntime-node from ${dir} (run bench/compare_ort.sh to install it): ${e.message}\n`);
    process.exit(1);
  }
}

function readConfig(dir) {
  const file = path.join(dir, 'genai_config.json');
  let cfg;
  try {
    cfg = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    process.stderr.write(`error: ${file}: ${e.message}\n`);
    process.exit(1);
  }
  const m = cfg.model || {};
  const d = m.decoder || {};
  const need = (obj, key, where) => {
    if (obj[key] === undefined) {
      process.stderr.write(`error: ${file}: missing ${where}.${key}\n`);
      process.exit(1);
    }
    return obj[key];
  };
  const inputs = need(d, 'inputs', 'model.decoder');
  const outputs = need(d, 'outputs', 'model.decoder');
  return {
    filename: path.join(dir, d.filename || 'model.onnx'),
    layers: need(d, 'num_hidden_layers', 'model.decoder'),
    kvHeads: need(d, 'num_key_value_heads', 'model.decoder'),
    headSize: need(d, 'head_size', 'model.decoder'),
    vocab: need(m, 'vocab_size', 'model'),
    maxLength: (cfg.search && cfg.search.max_length) || need(m, 'context_length', 'model'),
    shareBuffer: Boolean(cfg.search && cfg.search.past_present_share_buffer),
    names: {
      inputIds: inputs.input_ids || 'input_ids',
      mask: inputs.attention_mask || 'attention_mask',
      pastKey: inputs.past_key_names || 'past_key_values.%d.key',
      pastValue: inputs.past_value_names || 'past_key_values.%d.value',
      logits: outputs.logits || 'logits',
      presentKey: outputs.present_key_names || 'present.%d.key',
      presentValue: outputs.present_value_names || 'present.%d.value',
    },
  };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function argmaxLast(logits, vocab) {
  const data = logits.data;
  const base = data.length - vocab;
  let best = 0;
  for (let i = 1; i < vocab; i++) if (data[base + i] > data[base + best]) best = i;
  return best;
}

// One greedy generation: prefill of the prompt, then tokens - 1 single-token decode steps.
async function generate(ort, session, cfg, prompt, tokens, bind, keepLogits) {
  const { names } = cfg;
  const share = cfg.shareBuffer && bind;
  const kvShape = (len) => [1, cfg.kvHeads, len, cfg.headSize];
  const past = [];
  for (let l = 0; l < cfg.layers; l++) {
    const len = cfg.shareBuffer ? cfg.maxLength : 0;
    past.push([new ort.Tensor('float32', new Float32Array(cfg.kvHeads * len * cfg.headSize), kvShape(len)),
      new ort.Tensor('float32', new Float32Array(cfg.kvHeads * len * cfg.headSize), kvShape(len))]);
  }
  if (prompt.length + tokens > cfg.maxLength) {
    throw new Error(`prompt ${prompt.length} + ${tokens} tokens exceed max_length ${cfg.maxLength}`);
  }
  const ids = [];
  const logitsOut = [];
  const stepMs = [];
  let input = prompt;
  let total = 0;
  let cpuAtDecode = null;
  for (let step = 0; step < tokens; step++) {
    if (step === 1) cpuAtDecode = process.cpuUsage();
    total += input.length;
    const feeds = {
      [names.inputIds]: new ort.Tensor('int64', BigInt64Array.from(input, BigInt), [1, input.length]),
      [names.mask]: new ort.Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]),
    };
    const fetches = { [names.logits]: null };
    for (let l = 0; l < cfg.layers; l++) {
      feeds[names.pastKey.replace('%d', l)] = past[l][0];
      feeds[names.pastValue.replace('%d', l)] = past[l][1];
      // Shared buffer: the present outputs are the past inputs' own memory (GQA appends in place).
      fetches[names.presentKey.replace('%d', l)] = share ? past[l][0] : null;
      fetches[names.presentValue.replace('%d', l)] = share ? past[l][1] : null;
    }
    const t0 = process.hrtime.bigint();
    const out = await session.run(feeds, fetches);
    stepMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const next = argmaxLast(out[names.logits], cfg.vocab);
    if (keepLogits) logitsOut.push(out[names.logits].data.slice(out[names.logits].data.length - cfg.vocab));
    if (!share) {
      for (let l = 0; l < cfg.layers; l++) {
        past[l] = [out[names.presentKey.replace('%d', l)], out[names.presentValue.replace('%d', l)]];
      }
    }
    ids.push(next);
    input = [next];
  }
  // CPU time (all threads) per decode step: on a shared machine, wall time / CPU time shows how
  // much of the CPU the run got.
  const cpu = cpuAtDecode ? process.cpuUsage(cpuAtDecode) : null;
  const decodeCpuMs = cpu && tokens > 1 ? (cpu.user + cpu.system) / 1000 / (tokens - 1) : NaN;
  return { ids, prefillMs: stepMs[0], decodeMs: stepMs.slice(1), decodeCpuMs, logits: logitsOut };
}

// Held-out perplexity: each window one prefill from empty (or zero, for a shared buffer) past.
async function perplexity(ort, session, cfg, stream, window) {
  const { names } = cfg;
  let nll = 0;
  let count = 0;
  for (let start = 0; start + 1 < stream.length; start += window) {
    const chunk = stream.slice(start, start + window);
    if (chunk.length < 2) break;
    const input = chunk.slice(0, -1);
    const feeds = {
      [names.inputIds]: new ort.Tensor('int64', BigInt64Array.from(input, BigInt), [1, input.length]),
      [names.mask]: new ort.Tensor('int64', new BigInt64Array(input.length).fill(1n), [1, input.length]),
    };
    const len = cfg.shareBuffer ? cfg.maxLength : 0;
    for (let l = 0; l < cfg.layers; l++) {
      for (const n of [names.pastKey, names.pastValue]) {
        feeds[n.replace('%d', l)] = new ort.Tensor('float32', new Float32Array(cfg.kvHeads * len * cfg.headSize),
          [1, cfg.kvHeads, len, cfg.headSize]);
      }
    }
    const logits = (await session.run(feeds, [names.logits]))[names.logits].data;
    for (let t = 0; t < input.length; t++) {
      const row = logits.subarray(t * cfg.vocab, (t + 1) * cfg.vocab);
      let max = -Infinity;
      for (let i = 0; i < cfg.vocab; i++) if (row[i] > max) max = row[i];
      let sum = 0;
      for (let i = 0; i < cfg.vocab; i++) sum += Math.exp(row[i] - max);
      nll += Math.log(sum) + max - row[chunk[t + 1]];
      count++;
    }
  }
  return { mean_nll: nll / count, perplexity: Math.exp(nll / count), predicted_tokens: count, window };
}

async function main() {
  const opt = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  const cfg = readConfig(opt.dir);
  const prompt = opt.promptIds ||
    Array.from({ length: opt.promptLen }, (_, i) => (i * 7919 + 13) % Math.min(cfg.vocab, 4093));
  for (const id of prompt) if (id >= cfg.vocab) usage(`prompt id ${id} is not below vocab_size ${cfg.vocab}`);
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(cfg.filename, {
    executionProviders: ['cpu'],
    intraOpNumThreads: opt.threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  });
  const initMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (opt.perplexity) {
    const parsed = JSON.parse(fs.readFileSync(opt.perplexity, 'utf8'));
    const stream = Array.isArray(parsed) ? parsed : parsed.heldout && parsed.heldout.token_ids;
    if (!Array.isArray(stream)) usage(`${opt.perplexity}: expected an array of ids or heldout.token_ids`);
    const result = { engine: 'onnxruntime', model: opt.dir, ...(await perplexity(ort, session, cfg, stream, opt.window)) };
    process.stdout.write(`${opt.dir}: perplexity ${result.perplexity.toFixed(4)} over ${result.predicted_tokens} tokens\n`);
    process.stdout.write(JSON.stringify(result) + '\n');
    return;
  }
  let bind = opt.bind && cfg.shareBuffer;
  for (let i = 0; i < opt.warmup; i++) {
    try {
      await generate(ort, session, cfg, prompt, Math.min(opt.tokens, 8), bind, false);
    } catch (e) {
      if (!bind) throw e;
      process.stderr.write(`note: the run with present bound to the past buffers failed (${e.message}); retrying with present passed back as past\n`);
      bind = false;
    }
  }
  const runs = [];
  for (let r = 0; r < opt.runs; r++) {
    runs.push(await generate(ort, session, cfg, prompt, opt.tokens, bind, opt.dumpLogits && r === opt.runs - 1));
  }
  const last = runs[runs.length - 1];
  for (const run of runs) {
    if (run.ids.join(',') !== last.ids.join(',')) throw new Error('runs generated different ids');
  }
  if (opt.dumpLogits) {
    const flat = new Float32Array(last.logits.length * cfg.vocab);
    last.logits.forEach((row, i) => flat.set(row, i * cfg.vocab));
    fs.writeFileSync(opt.dumpLogits, Buffer.from(flat.buffer));
  }
  const prefillMs = median(runs.map((r) => r.prefillMs));
  const decodeMs = median(runs.map((r) => median(r.decodeMs)));
  const result = {
    engine: 'onnxruntime', version: require(require.resolve('onnxruntime-node/package.json',
      { paths: [process.env.XONNX_ORT_DIR || path.join(os.homedir(), '.cache', 'xonnx-ort')] })).version,
    model: opt.dir, threads: opt.threads, share_buffer: cfg.shareBuffer, bound: bind,
    prompt_tokens: prompt.length, generated: last.ids.length, runs: opt.runs,
    init_ms: +initMs.toFixed(1), prefill_ms: +prefillMs.toFixed(2),
    prefill_tokens_per_s: +(prompt.length * 1000 / prefillMs).toFixed(1),
    decode_ms_median: +decodeMs.toFixed(3), decode_tokens_per_s: +(1000 / decodeMs).toFixed(2),
    decode_cpu_ms_per_token: +median(runs.map((r) => r.decodeCpuMs)).toFixed(3), load_average: os.loadavg()[0],
    ids: last.ids,
  };
  process.stdout.write(`${opt.dir}: ${opt.threads} thread(s), ${prompt.length} prompt tokens, ${last.ids.length} generated` +
    `${bind ? ', past/present bound to one buffer' : ''}\n` +
    `  prefill ${result.prefill_ms} ms (${result.prefill_tokens_per_s} tok/s), decode ${result.decode_ms_median} ms/token ` +
    `(${result.decode_tokens_per_s} tok/s, median of ${opt.runs} run(s)), ${result.decode_cpu_ms_per_token} ms CPU/token, ` +
    `load average ${result.load_average.toFixed(1)}\n`);
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((e) => {
  process.stderr.write(`error: ${e.message}\n`);
  process.exit(1);
});
