#!/usr/bin/env node
// ONNX Runtime (onnxruntime-node, CPU) counterpart of `xonnx bench --json`:
//   node bench/ort/bench.js MODEL [--threads N] [--warmup N] [--iters N] [--shape NAME=d0,d1,...]...
// Same procedure: session creation, one first run, warmup runs, timed runs (median/p90/min);
// same inputs rule (floats uniform in [-1, 1), integers and bool zero; --shape fixes symbolic
// dims, empty = scalar). Prints a summary, then one JSON object on the last line.
// onnxruntime-node is loaded from $XONNX_ORT_DIR/node_modules (default ~/.cache/xonnx-ort).
'use strict';
const os = require('os');
const path = require('path');

const baseRssMb = process.memoryUsage().rss / (1024 * 1024);  // bare Node.js, before ORT

function usage(msg) {
  process.stderr.write(`error: ${msg}\nusage: bench.js MODEL [--threads N] [--warmup N] [--iters N] [--shape NAME=d0,d1,...]...\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opt = { model: null, threads: 1, warmup: 5, iters: 50, shapes: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`));
    const positive = (v) => (/^[1-9][0-9]*$/.test(v) ? Number(v) : usage(`${a} must be a positive integer, got '${v}'`));
    if (a === '--threads') opt.threads = positive(value());
    else if (a === '--warmup') opt.warmup = positive(value());
    else if (a === '--iters') opt.iters = positive(value());
    else if (a === '--shape') {
      const spec = value();
      const eq = spec.indexOf('=');
      if (eq <= 0) usage(`--shape '${spec}' must be NAME=d0,d1,...`);
      const dims = spec.slice(eq + 1);
      const shape = dims === '' ? [] : dims.split(',').map((d) => {
        if (!/^[0-9]+$/.test(d)) usage(`--shape '${spec}': dimension '${d}' is not a non-negative integer`);
        return Number(d);
      });
      opt.shapes[spec.slice(0, eq)] = shape;
    } else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else if (opt.model === null) opt.model = a;
    else usage(`unexpected argument ${a}`);
  }
  if (opt.model === null) usage('missing MODEL');
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

// Mulberry32: small seeded PRNG, uniform in [0, 1).
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function floatToHalf(f) {
  const buf = new DataView(new ArrayBuffer(4));
  buf.setFloat32(0, f);
  const x = buf.getUint32(0);
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  if (exp <= 0) return sign;  // |f| < 2^-14: flush to zero (inputs are in [-1, 1))
  return sign | (exp << 10) | ((x >>> 13) & 0x3ff);
}

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array,
  int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array,
  int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

function makeInput(ort, meta, shapes, random) {
  if (!meta.isTensor) throw new Error(`input '${meta.name}' is not a tensor`);
  let shape = shapes[meta.name];
  if (shape === undefined) {
    if (!Array.isArray(meta.shape)) throw new Error(`input '${meta.name}' has no fixed shape: give it with --shape`);
    shape = meta.shape.map((d) => {
      if (typeof d !== 'number' || d < 0) {
        throw new Error(`input '${meta.name}' has symbolic dimension '${d}': give it with --shape ${meta.name}=d0,d1,...`);
      }
      return d;
    });
  } else if (Array.isArray(meta.shape) && meta.shape.length !== shape.length) {
    throw new Error(`--shape for input '${meta.name}' has rank ${shape.length}, the model's input has rank ${meta.shape.length}`);
  }
  const Arr = ARRAYS[meta.type];
  if (!Arr) throw new Error(`cannot make data for input '${meta.name}' of type ${meta.type}`);
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Arr(n);  // zeros: integers and bool
  if (meta.type === 'float32' || meta.type === 'float64') {
    for (let i = 0; i < n; i++) data[i] = random() * 2 - 1;
  } else if (meta.type === 'float16') {
    for (let i = 0; i < n; i++) data[i] = floatToHalf(random() * 2 - 1);
  }
  return new ort.Tensor(meta.type, data, shape);
}

function stats(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const n = s.length;
  const median = n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  return { median, p90: s[Math.ceil(0.9 * n) - 1], min: s[0], mean: s.reduce((a, b) => a + b, 0) / n };
}

async function main() {
  const opt = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  const now = () => Number(process.hrtime.bigint()) / 1e6;
  const t0 = now();
  const session = await ort.InferenceSession.create(opt.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: opt.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const initMs = now() - t0;
  for (const name of Object.keys(opt.shapes)) {
    if (!session.inputNames.includes(name)) {
      throw new Error(`--shape: the model has no input named '${name}' (inputs: ${session.inputNames.join(', ')})`);
    }
  }
  const random = rng(0);
  const feeds = {};
  console.log(`model      ${opt.model}\nthreads    ${opt.threads}\nengine     onnxruntime-node ${ort.env.versions.node}`);
  for (const meta of session.inputMetadata) {
    feeds[meta.name] = makeInput(ort, meta, opt.shapes, random);
    console.log(`input      ${meta.name} ${meta.type} [${feeds[meta.name].dims.join(',')}]`);
  }
  const runOnce = async () => {
    const start = now();
    await session.run(feeds);
    return now() - start;
  };
  const firstMs = await runOnce();
  for (let i = 0; i < opt.warmup; i++) await runOnce();
  const times = [];
  for (let i = 0; i < opt.iters; i++) times.push(await runOnce());
  const st = stats(times);
  const peakRssMb = process.resourceUsage().maxRSS / 1024;  // KiB
  console.log(`init       ${initMs.toFixed(3)} ms (session creation)`);
  console.log(`first run  ${firstMs.toFixed(3)} ms`);
  console.log(`warmup     ${opt.warmup} runs`);
  console.log(`timed      ${opt.iters} runs: median ${st.median.toFixed(3)} ms, p90 ${st.p90.toFixed(3)} ms, min ${st.min.toFixed(3)} ms, mean ${st.mean.toFixed(3)} ms`);
  console.log(`peak RSS   ${peakRssMb.toFixed(1)} MB (Node.js alone: ${baseRssMb.toFixed(1)} MB)`);
  console.log(JSON.stringify({
    engine: 'onnxruntime', version: ort.env.versions.node, model: opt.model, threads: opt.threads,
    warmup: opt.warmup, iters: opt.iters, init_ms: initMs, first_ms: firstMs, median_ms: st.median,
    p90_ms: st.p90, min_ms: st.min, mean_ms: st.mean, peak_rss_mb: peakRssMb, base_rss_mb: baseRssMb,
  }));
}

main().catch((e) => {
  process.stderr.write(`error: ${e.message}\n`);
  process.exit(1);
});
