#!/usr/bin/env bash
# An idle `xonnx serve`: resident memory against the loaded model's size, threads, and CPU time
# spent while idle, after one chat request (so that every lazily built structure exists).
#   bash bench/serve/idle.sh [path/to/xonnx] [MODEL_DIR] [idle_seconds] [serve options...]
# Prints RSS (VmRSS), the model's weight files and KV cache (from /metrics), their ratios, the
# server's thread count, and its user+system CPU ticks over the idle period (/proc/PID/stat).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
xonnx="${1:-$here/../../build/bin/xonnx}"
model="${2:-$here/../../tests/models_llm/tiny/genai_int4}"
idle="${3:-3}"
shift $(( $# < 3 ? $# : 3 ))
name="$(basename "$model")"
source "$here/../../sdk/examples/chat/serve_local.sh"
log="$(mktemp)"
SERVE_PID=""
trap '[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null; rm -f "$log"' EXIT
serve_start "$log" "$xonnx" "$model" --keep-alive -1 "$@"
pid=$SERVE_PID
rss_kib() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status"; }
# RSS split: anonymous memory (packed weights, KV cache, buffers) and file pages (the binary,
# its libraries, weights read in place from the model's mapping).
split() { awk '/^RssAnon|^RssFile/ { printf "%s %.1f MiB  ", $1, $2 / 1024 }' "/proc/$pid/status"; }
ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
metric() {  # the whole page first: awk's early exit must not fail curl (pipefail)
  local page
  page="$(curl -s "$SERVE_BASE/metrics")"
  awk -v m="$1" '$1 ~ "^"m { print $2; exit }' <<<"$page"
}

sleep 2  # the engine trims what loading left behind after 1 s idle (EngineOptions::idle_trim_ms)
loaded_kib=$(rss_kib)
loaded_split=$(split)
curl -s -o /dev/null "$SERVE_BASE/v1/chat/completions" -H 'Content-Type: application/json' \
  -d "{\"model\":\"$name\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}],\"max_tokens\":16}"
sleep 6  # past cpp-httplib's keep-alive wait of the connection (5 s) and the pools' spinning
t0=$(ticks)
w0=$(metric xonnx_keep_alive_wakeups_total)
sleep "$idle"
t1=$(ticks)
w1=$(metric xonnx_keep_alive_wakeups_total)
rss=$(rss_kib)
echo "loaded: $loaded_split"
echo "idle:   $(split)"
memory=$(metric 'xonnx_model_memory_bytes')
kv=$(metric 'xonnx_model_kv_cache_bytes')
weights=$(awk -v m="$memory" -v k="$kv" 'BEGIN { printf "%d", m - k }')
awk -v r="$rss" -v l="$loaded_kib" -v w="$weights" -v k="$kv" -v th="$(ls /proc/$pid/task | wc -l)" \
  -v t="$((t1 - t0))" -v s="$idle" -v wk="$((w1 - w0))" 'BEGIN {
  mib = 1048576
  printf "RSS loaded %.1f MiB, idle after a request %.1f MiB; weights %.1f MiB, KV cache %.1f MiB\n", l / 1024, r / 1024, w / mib, k / mib
  printf "RSS / weights %.2f, RSS / (weights + KV) %.2f; threads %d\n", r * 1024 / w, r * 1024 / (w + k), th
  printf "idle %d s: %d CPU ticks (1/100 s), %d keep-alive wake-ups\n", s, t, wk
}'
