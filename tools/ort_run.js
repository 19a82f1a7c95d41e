#!/usr/bin/env node
// Runs a model once in ONNX Runtime (onnxruntime-node, CPU) and writes its outputs: the
// second-runtime expectations of tools/quantized_fixtures.py and tools/zoo_check.py.
//   node tools/ort_run.js MODEL < inputs.json > outputs.json
//   node tools/ort_run.js MODEL --test-data IN_DIR OUT_DIR [--threads N]
// JSON: {"<name>": {"type": "float32"|"int64"|..., "dims": [...], "data": [...]}, ...}; outputs
// come back in the model's output order as a list of such objects (with "name").
// --test-data: inputs are IN_DIR/input_K.pb (ONNX TensorProto, the model's input order, as in the
// ONNX backend-test layout), outputs are written as OUT_DIR/output_K.pb in the model's output order.
// One intra-op thread unless --threads is given.
// onnxruntime-node is loaded from $XONNX_ORT_DIR/node_modules (default ~/.cache/xonnx-ort,
// installed by bench/ort/install.sh).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { toOrtTensor, fromOrtTensor } = require('./tensor_proto');

const dir = process.env.XONNX_ORT_DIR || path.join(os.homedir(), '.cache', 'xonnx-ort');
const ort = require(require.resolve('onnxruntime-node', { paths: [dir] }));
const arrays = {
  float32: Float32Array, int64: BigInt64Array, int32: Int32Array, int8: Int8Array, uint8: Uint8Array,
  bool: Uint8Array, float64: Float64Array,
};

function jsonFeeds() {
  const input = JSON.parse(fs.readFileSync(0, 'utf8'));
  const feeds = {};
  for (const [name, t] of Object.entries(input)) {
    const Arr = arrays[t.type];
    if (!Arr) throw new Error(`input ${name}: unsupported type ${t.type}`);
    const data = t.type === 'int64' ? Arr.from(t.data.map(BigInt)) : Arr.from(t.data);
    feeds[name] = new ort.Tensor(t.type, data, t.dims);
  }
  return feeds;
}

function testDataFeeds(session, inDir) {
  const feeds = {};
  session.inputNames.forEach((name, k) => {
    const file = path.join(inDir, `input_${k}.pb`);
    if (!fs.existsSync(file)) throw new Error(`${file} is missing (the model's input ${k} is '${name}')`);
    feeds[name] = toOrtTensor(ort, fs.readFileSync(file)).tensor;
  });
  return feeds;
}

async function main() {
  const args = process.argv.slice(2);
  let threads = 1;
  let testData = null;
  const positional = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--threads') threads = Number(args[++i]);
    else if (args[i] === '--test-data') testData = [args[++i], args[++i]];
    else positional.push(args[i]);
  }
  const model = positional[0];
  if (!model || positional.length > 1 || !(threads >= 1) || (testData && !testData[1])) {
    throw new Error('usage: ort_run.js MODEL [--test-data IN_DIR OUT_DIR] [--threads N] (< inputs.json)');
  }
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: threads, interOpNumThreads: 1 });
  const results = await session.run(testData ? testDataFeeds(session, testData[0]) : jsonFeeds());
  if (testData) {
    fs.mkdirSync(testData[1], { recursive: true });
    session.outputNames.forEach((name, k) => {
      fs.writeFileSync(path.join(testData[1], `output_${k}.pb`), fromOrtTensor(name, results[name]));
    });
    return;
  }
  const out = session.outputNames.map((name) => {
    const t = results[name];
    const data = Array.from(t.data, (v) => (typeof v === 'bigint' ? Number(v) : v));
    return { name, type: t.type, dims: Array.from(t.dims), data };
  });
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write(`ort_run.js: ${e.message}\n`);
  process.exit(1);
});
