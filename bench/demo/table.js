#!/usr/bin/env node
// Tables for bench/demo_compare.sh from its JSON lines: per demo and thread count, the median
// over rounds of each engine's pipeline and model time, and the ratios xonnx / ORT.
//   node bench/demo/table.js RESULTS.jsonl
'use strict';
const fs = require('fs');
const path = require('path');

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};
const rows = fs.readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l).map(JSON.parse);
const groups = new Map();  // "demo threads" -> round -> {xonnx, onnxruntime}
for (const r of rows) {
  const key = `${r.demo} ${r.threads}`;
  if (!groups.has(key)) groups.set(key, new Map());
  const rounds = groups.get(key);
  if (!rounds.has(r.round)) rounds.set(r.round, {});
  rounds.get(r.round)[r.engine] = r;
}

const f = (v, d = 1) => v.toFixed(d);
const out = ['| pipeline | threads | xonnx | ORT 1.30 | xonnx / ORT | models only: xonnx | ORT | ratio |',
             '|---|---|---|---|---|---|---|---|'];
const perModel = ['| model (ms per pass) | threads | xonnx | ORT 1.30 | xonnx / ORT |', '|---|---|---|---|---|'];
for (const [key, rounds] of groups) {
  const [demo, threads] = key.split(' ');
  const pairs = [...rounds.values()].filter((p) => p.xonnx && p.onnxruntime);
  if (!pairs.length) continue;
  if (demo === 'ocr') {
    // ORT's pipeline: this round's pre/post-processing time plus ORT's model time.
    const x = median(pairs.map((p) => p.xonnx.per_image_ms));
    const o = median(pairs.map((p) => p.xonnx.other_ms + p.onnxruntime.models_ms));
    const xm = median(pairs.map((p) => p.xonnx.models_ms)), om = median(pairs.map((p) => p.onnxruntime.models_ms));
    out.push(`| OCR, ms per 640x480 image | ${threads} | ${f(x)} | ${f(o)} | ${f(x / o, 2)} | ${f(xm)} | ${f(om)} | ${f(xm / om, 2)} |`);
    for (const [field, name] of [['det_ms', 'det'], ['cls_ms', 'cls'], ['rec_ms', 'rec']]) {
      const xs = median(pairs.map((p) => p.xonnx[field]));
      const os = median(pairs.map((p) => {
        const m = Object.keys(p.onnxruntime.per_model_ms).find((k) => path.basename(k).includes(`_${name}_`));
        return m ? p.onnxruntime.per_model_ms[m] : NaN;
      }));
      perModel.push(`| OCR ${name} | ${threads} | ${f(xs)} | ${f(os)} | ${f(xs / os, 2)} |`);
    }
  } else {
    const audio = pairs[0].xonnx.audio_s;
    const x = median(pairs.map((p) => p.xonnx.total_ms)) / 1000 / audio;
    const o = median(pairs.map((p) => p.xonnx.other_ms + p.onnxruntime.models_ms)) / 1000 / audio;
    const xm = median(pairs.map((p) => p.xonnx.models_ms)), om = median(pairs.map((p) => p.onnxruntime.models_ms));
    out.push(`| VAD, real-time factor over ${f(audio, 0)} s | ${threads} | ${f(x, 4)} | ${f(o, 4)} | ${f(x / o, 2)} | ${f(xm)} ms | ${f(om)} ms | ${f(xm / om, 2)} |`);
    const frames = pairs[0].xonnx.frames;
    perModel.push(`| VAD silero v5, per frame | ${threads} | ${f(xm / frames, 3)} | ${f(om / frames, 3)} | ${f(xm / om, 2)} |`);
  }
}
console.log(out.join('\n'));
console.log();
console.log(perModel.join('\n'));
