#!/usr/bin/env bash
# End to end: the chat demo's server and openai client (sdk/examples/chat/run_chat.sh) on the
# shipped tiny model, greedy, two turns. Checks that the first streamed answer is the text
# `xonnx generate --chat` gives for the same system message and question (same model, template
# and greedy decoding: the known truth), that both turns finish with a reason and token counts,
# and that the second turn reused the first turn's KV cache (cached prompt tokens > 0).
#   chat_e2e.sh SOURCE_DIR WORK_DIR XONNX
set -euo pipefail
src=$1 work=$2 xonnx=$3
model=$src/tests/models_llm/tiny/genai_int4
system="You are a helpful assistant running on this device."
question="Tell me something about the sea."
rm -rf "$work"
mkdir -p "$work"
bash "$src/sdk/examples/chat/run_chat.sh" "$xonnx" "$model" "$work" --temperature 0 --max-tokens 32 \
  "$question" "Why?" > "$work/client.txt"
"$xonnx" generate "$model" --chat --system "$system" -p "$question" --temperature 0 -n 32 -q \
  > "$work/generate.txt"
node - "$work/transcript.json" "$work/generate.txt" <<'JS'
const fs = require('fs');
const [transcriptFile, generateFile] = process.argv.slice(2);
const turns = JSON.parse(fs.readFileSync(transcriptFile, 'utf8'));
const expected = fs.readFileSync(generateFile, 'utf8').trim();
const fail = (m) => { console.error('FAIL: ' + m); process.exit(1); };
if (turns.length !== 2) fail(`${turns.length} turns in the transcript`);
if (turns[0].answer.trim() !== expected)
  fail(`served answer ${JSON.stringify(turns[0].answer)} differs from xonnx generate's ${JSON.stringify(expected)}`);
for (const t of turns) {
  if (!['stop', 'length'].includes(t.finish_reason)) fail(`finish_reason ${t.finish_reason}`);
  if (!(t.usage.prompt_tokens > 0 && t.usage.completion_tokens > 0)) fail('usage without tokens');
}
const cached = turns[1].usage.prompt_tokens_details?.cached_tokens ?? 0;
if (!(cached > 0)) fail('the second turn reused no cached prompt tokens');
console.log(`PASS: answer equals xonnx generate's (${turns[0].usage.completion_tokens} tokens); ` +
            `turn 2 reused ${cached} of ${turns[1].usage.prompt_tokens} prompt tokens`);
JS
