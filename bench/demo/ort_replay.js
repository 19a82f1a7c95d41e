#!/usr/bin/env node
// Replays the model runs a demo recorded (xonnx-ocr / xonnx-vad --record DIR) in ONNX Runtime
// (onnxruntime-node, CPU EP): the same models on the same input tensors in the same order, so
// bench/demo_compare.sh can put ORT's model time next to xonnx's in the same pipeline.
//   node bench/demo/ort_replay.js DIR [--threads N] [--repeat N] [--profile]
// One untimed pass first (sessions warm, shapes seen), then N timed passes. Prints one JSON
// line: {"engine", "threads", "repeat", "runs", "models_ms" (median pass), "per_model_ms"}.
// --profile: ORT's own per-node profile of the timed passes, summed per model and op type
// and the slowest nodes with their output shapes (ms per pass, on stderr); compare with
// `xonnx bench MODEL --profile` at the same shapes.
// onnxruntime-node is loaded from $XONNX_ORT_DIR/node_modules (default ~/.cache/xonnx-ort).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

function usage(msg) {
  process.stderr.write(`error: ${msg}\nusage: ort_replay.js DIR [--threads N] [--repeat N] [--profile]\n`);
  process.exit(2);
}

const ARRAYS = { float32: Float32Array, int64: BigInt64Array, int32: Int32Array, uint8: Uint8Array, int8: Int8Array };

function median(v) {
  const s = [...v].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

async function main() {
  const opt = { dir: null, threads: 1, repeat: 5, profile: false };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const positive = () => {
      const v = argv[++i];
      if (!/^[1-9][0-9]*$/.test(v || '')) usage(`${a} needs a positive integer`);
      return Number(v);
    };
    if (a === '--threads') opt.threads = positive();
    else if (a === '--repeat') opt.repeat = positive();
    else if (a === '--profile') opt.profile = true;
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else if (opt.dir === null) opt.dir = a;
    else usage(`unexpected argument ${a}`);
  }
  if (opt.dir === null) usage('missing DIR');
  const ortDir = process.env.XONNX_ORT_DIR || path.join(os.homedir(), '.cache', 'xonnx-ort');
  const ort = require(require.resolve('onnxruntime-node', { paths: [ortDir] }));

  const lines = fs.readFileSync(path.join(opt.dir, 'runs.jsonl'), 'utf8').split('\n').filter((l) => l);
  const data = fs.readFileSync(path.join(opt.dir, 'inputs.bin'));
  const profileDir = opt.profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'ort-profile-')) : null;
  const sessions = new Map();
  const runs = [];
  for (const line of lines) {
    const run = JSON.parse(line);
    if (!sessions.has(run.model)) {
      sessions.set(run.model, await ort.InferenceSession.create(run.model, {
        executionProviders: ['cpu'], intraOpNumThreads: opt.threads, interOpNumThreads: 1,
        executionMode: 'sequential', graphOptimizationLevel: 'all',
        ...(profileDir ? { enableProfiling: true, profileFilePrefix: path.join(profileDir, `m${sessions.size}`) } : {}),
      }));
    }
    const session = sessions.get(run.model);
    const inputs = run.inputs.map((inp, k) => {
      const Arr = ARRAYS[inp.type];
      if (!Arr) throw new Error(`${run.model}: input ${k} has unsupported type ${inp.type}`);
      if (inp.offset + inp.bytes > data.length) throw new Error(`${opt.dir}: inputs.bin is shorter than runs.jsonl says`);
      // A copy with the array type's alignment.
      const bytes = new Uint8Array(inp.bytes);
      bytes.set(data.subarray(inp.offset, inp.offset + inp.bytes));
      return { name: inp.name || session.inputNames[k], type: inp.type, dims: inp.dims, values: new Arr(bytes.buffer) };
    });
    runs.push({ model: run.model, session, inputs });
  }

  const now = () => Number(process.hrtime.bigint()) / 1e6;
  const pass = async () => {
    const perModel = {};
    for (const r of runs) {
      const start = now();
      const feeds = {};
      for (const inp of r.inputs) feeds[inp.name] = new ort.Tensor(inp.type, inp.values, inp.dims);
      await r.session.run(feeds);
      perModel[r.model] = (perModel[r.model] || 0) + now() - start;
    }
    return perModel;
  };
  await pass();  // untimed
  const passes = [];
  for (let i = 0; i < opt.repeat; i++) passes.push(await pass());
  const perModelMs = {};
  for (const m of sessions.keys()) perModelMs[m] = median(passes.map((p) => p[m] || 0));
  const total = median(passes.map((p) => Object.values(p).reduce((a, b) => a + b, 0)));
  if (profileDir) {
    printProfiles(profileDir, [...sessions.keys()], runs, opt.repeat, sessions);
    fs.rmSync(profileDir, { recursive: true, force: true });
  }
  console.log(JSON.stringify({
    engine: 'onnxruntime', version: ort.env.versions.node, threads: opt.threads, repeat: opt.repeat,
    runs: runs.length, models_ms: total, per_model_ms: perModelMs,
  }));
}

// Sums ORT's per-node events ("<node>_kernel_time") of the timed passes (the last `repeat`
// passes' model runs) per op type, and lists the slowest nodes, in ms per pass. If, Loop and
// Scan are left out: their events span their bodies' nodes, which are counted themselves.
function printProfiles(dir, models, runs, repeat, sessions) {
  models.forEach((model, m) => {
    sessions.get(model).endProfiling();
    const file = fs.readdirSync(dir).find((f) => f.startsWith(`m${m}_`));
    if (!file) return;
    const events = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    const runsPerPass = runs.filter((r) => r.model === model).length;
    const modelRuns = events.filter((e) => e.cat === 'Session' && e.name === 'model_run');
    const timed = modelRuns.slice(modelRuns.length - runsPerPass * repeat);
    const inTimed = (e) => timed.some((r) => e.ts >= r.ts && e.ts <= r.ts + r.dur);
    const controlFlow = new Set(['If', 'Loop', 'Scan']);
    const nodes = events.filter((e) => e.cat === 'Node' && e.name.endsWith('_kernel_time') &&
                                       !controlFlow.has(e.args.op_name) && inTimed(e));
    const byOp = new Map(), byNode = new Map();
    for (const e of nodes) {
      const ms = e.dur / 1000 / repeat;
      byOp.set(e.args.op_name, (byOp.get(e.args.op_name) || 0) + ms);
      const name = e.name.replace(/_kernel_time$/, '');
      const prev = byNode.get(name) || { ms: 0, op: e.args.op_name, shape: JSON.stringify(e.args.output_type_shape || []) };
      prev.ms += ms;
      byNode.set(name, prev);
    }
    const total = [...byOp.values()].reduce((a, b) => a + b, 0);
    const lines = [`ORT profile of ${path.basename(model)}: ${total.toFixed(3)} ms per pass in nodes`];
    for (const [op, ms] of [...byOp].sort((a, b) => b[1] - a[1])) {
      lines.push(`  ${ms.toFixed(3).padStart(10)} ${(100 * ms / total).toFixed(1).padStart(5)}%  ${op}`);
    }
    lines.push('  slowest nodes:');
    for (const [name, n] of [...byNode].sort((a, b) => b[1].ms - a[1].ms).slice(0, 15)) {
      lines.push(`  ${n.ms.toFixed(3).padStart(10)}  ${n.op.padEnd(20)} ${name}  -> ${n.shape}`);
    }
    process.stderr.write(lines.join('\n') + '\n');
  });
}

main().catch((e) => {
  process.stderr.write(`ort_replay.js: ${e.message}\n`);
  process.exit(1);
});
