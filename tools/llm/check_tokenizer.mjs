#!/usr/bin/env node
// Cross-checks a tokenizer.json against transformers.js (@huggingface/transformers from npm, an
// implementation independent of tools/llm/bpe.py), reading the files locally, no hub access:
//
//   node tools/llm/check_tokenizer.mjs TOKENIZER_DIR CASES.json
//
// CASES.json: [{"text": "...", "ids": [...]}, ...] (ids from another encoder; special-token strings
// in a text are encoded as the special tokens). Prints the number of cases and mismatches and the
// first mismatches; exit status 1 on any mismatch. Also checks that decoding gives the text back.
// transformers.js is loaded from $XONNX_TFJS_DIR/node_modules (default ~/.cache/xonnx-tfjs):
//   npm install --prefix ~/.cache/xonnx-tfjs --ignore-scripts @huggingface/transformers@4
import fs from 'fs';
import os from 'os';
import path from 'path';
import { createRequire } from 'module';
import { pathToFileURL } from 'url';

const [dir, casesFile] = process.argv.slice(2);
if (!dir || !casesFile) {
  process.stderr.write('usage: check_tokenizer.mjs TOKENIZER_DIR CASES.json\n');
  process.exit(2);
}
const tfjsDir = process.env.XONNX_TFJS_DIR || path.join(os.homedir(), '.cache', 'xonnx-tfjs');
let tf;
try {
  const require = createRequire(path.join(tfjsDir, 'package.json'));
  tf = await import(pathToFileURL(require.resolve('@huggingface/transformers')).href);
} catch (e) {
  process.stderr.write(`error: cannot load @huggingface/transformers from ${tfjsDir}: ${e.message}\n`);
  process.exit(1);
}
tf.env.allowRemoteModels = false;
tf.env.allowLocalModels = true;
tf.env.localModelPath = path.dirname(path.resolve(dir)) + '/';
const tokenizer = await tf.AutoTokenizer.from_pretrained(path.basename(path.resolve(dir)), { local_files_only: true });

const cases = JSON.parse(fs.readFileSync(casesFile, 'utf8'));
let mismatches = 0;
let roundTrip = 0;
let tokens = 0;
for (const [i, c] of cases.entries()) {
  const ids = Array.from(tokenizer.encode(c.text, { add_special_tokens: false }));
  tokens += ids.length;
  if (ids.join(',') !== c.ids.join(',')) {
    if (mismatches < 5) {
      const at = ids.findIndex((id, k) => id !== c.ids[k]);
      process.stdout.write(`case ${i}: first difference at token ${at}: transformers.js ${ids.slice(at, at + 8)} vs ` +
        `expected ${c.ids.slice(at, at + 8)} in ${JSON.stringify(c.text.slice(0, 80))}\n`);
    }
    mismatches++;
  }
  if (tokenizer.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }) !== c.text) roundTrip++;
}
process.stdout.write(`${cases.length} texts, ${tokens} tokens: ${mismatches} id mismatches, ${roundTrip} decode mismatches\n`);
process.exit(mismatches || roundTrip ? 1 : 0);
