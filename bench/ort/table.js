#!/usr/bin/env node
// Markdown table from the JSON lines written by bench/compare_ort.sh (one line per run:
// `xonnx bench --json` or bench.js output, or {"engine", "model", "threads", "error"}; "case" is
// the model's position on the command line).
// Ratios are xonnx / ORT: above 1 means xonnx is slower (latency, init) or bigger (RSS);
// min-latency compares the fastest timed runs (steadier than medians on a busy machine).
// ORT's RSS is counted net of the bare Node.js process (base_rss_mb).
//   node bench/ort/table.js RUNS.jsonl [--json]
// --json prints the combined rows instead (one JSON array: model, threads, x and o figures), the
// input of bench/zoo_report.py.
'use strict';
const fs = require('fs');
const path = require('path');

const lines = fs.readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l.trim());
const runs = new Map();  // case and threads -> { model, threads, x: [runs], o: [runs] }
for (const line of lines) {
  const r = JSON.parse(line);
  const key = `${r.case ?? r.model}\t${r.threads}`;
  if (!runs.has(key)) runs.set(key, { model: r.model, threads: r.threads, x: [], o: [] });
  runs.get(key)[r.engine === 'xonnx' ? 'x' : 'o'].push(r);
}
// Several rounds (compare_ort.sh --rounds): each figure is the median of the rounds' figures;
// a failed round reports its error.
const median = (v) => {
  const s = v.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  if (s.length === 0) return undefined;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const combine = (list) => {
  const failed = list.find((r) => r.error);
  if (failed || list.length === 0) return failed || {};
  const out = {};
  for (const k of ['median_ms', 'min_ms', 'init_ms', 'peak_rss_mb', 'base_rss_mb']) out[k] = median(list.map((r) => r[k]));
  return out;
};
const rows = new Map();
for (const [key, r] of runs) rows.set(key, { model: r.model, threads: r.threads, x: combine(r.x), o: combine(r.o) });
if (process.argv[3] === '--json') {
  console.log(JSON.stringify([...rows.values()]));
  process.exit(0);
}

// model.onnx: its folder's name; a variant next to it (int8.onnx, int4.onnx): "folder variant".
const name = (m) => {
  const dir = path.basename(path.dirname(m)), base = path.basename(m, '.onnx');
  if (base === 'model') return dir;
  return ['int8', 'int4', 'fp16'].includes(base) ? `${dir} ${base}` : base;
};
const num = (v, d = 2) => (typeof v === 'number' ? v.toFixed(d) : 'error');
const ratio = (a, b) => (typeof a === 'number' && typeof b === 'number' && b > 0 ? `${(a / b).toFixed(2)}x` : '-');
const ortRss = (o) => (o && typeof o.peak_rss_mb === 'number' ? o.peak_rss_mb - o.base_rss_mb : undefined);

console.log('| model | threads | xonnx median ms | ORT median ms | latency xonnx/ORT | min-latency xonnx/ORT | xonnx init ms | ORT init ms | init xonnx/ORT | xonnx RSS MB | ORT RSS MB (net of Node) | RSS xonnx/ORT |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const { model, threads, x = {}, o = {} } of rows.values()) {
  console.log(`| ${name(model)} | ${threads} | ${num(x.median_ms, 3)} | ${num(o.median_ms, 3)}` +
    ` | ${ratio(x.median_ms, o.median_ms)} | ${ratio(x.min_ms, o.min_ms)}` +
    ` | ${num(x.init_ms, 1)} | ${num(o.init_ms, 1)} | ${ratio(x.init_ms, o.init_ms)}` +
    ` | ${num(x.peak_rss_mb, 1)} | ${num(ortRss(o), 1)} | ${ratio(x.peak_rss_mb, ortRss(o))} |`);
}
for (const { model, threads, x = {}, o = {} } of rows.values()) {
  for (const [engine, r] of [['xonnx', x], ['ORT', o]]) {
    if (r.error) console.log(`\n${engine} failed on ${name(model)} (threads ${threads}): ${r.error}`);
  }
}
