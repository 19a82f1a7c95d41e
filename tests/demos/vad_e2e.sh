#!/usr/bin/env bash
# End to end: synthesises speech with espeak-ng joined with silences by sox at known positions
# (sdk/examples/vad/make_sample.sh), finds the segments with xonnx-vad on silero VAD v5, and
# checks each boundary within +-100 ms of the truth, in two file formats: 48 kHz, 3 channels,
# 24-bit PCM (WAVE_FORMAT_EXTENSIBLE) and 8 kHz mono 16-bit PCM (the model's 8 kHz mode).
# Segments are compared without silero-vad's 30 ms padding (--speech-pad-ms 0): the padding is
# a margin added on purpose, the test checks where the model finds speech (the segmenter's
# padding rules have their own unit tests).
#   vad_e2e.sh SOURCE_DIR WORK_DIR PROGRAM...   (PROGRAM may start with an emulator)
set -euo pipefail
src=$1 work=$2
shift 2
models=$(bash "$src/scripts/install-demo-deps.sh" vad | tail -1)
rm -rf "$work"
mkdir -p "$work"
status=0
for format in "48000 3 pcm24" "8000 1 pcm16"; do
  read -r rate channels encoding <<< "$format"
  wav="$work/speech-$rate-$channels-$encoding.wav"
  bash "$src/sdk/examples/vad/make_sample.sh" "$wav" "$work/truth.txt" 12 "$rate" "$channels" "$encoding"
  "$@" "$wav" --model "$models/silero_vad_v5.onnx" --speech-pad-ms 0 > "$work/segments.txt"
  echo "$rate Hz, $channels channels, $encoding: found / true segments (s), errors (ms)"
  # Same count; every start and end within 0.1 s.
  awk -F'[- ]' 'NR == FNR { s[NR] = $1; e[NR] = $2; n = NR; next }
                { m = FNR; ds = 1000 * ($1 - s[FNR]); de = 1000 * ($2 - e[FNR])
                  bad_here = ds < -100 || ds > 100 || de < -100 || de > 100
                  printf "  %s / %s-%s: start %+.0f, end %+.0f%s\n", $0, s[FNR], e[FNR], ds, de, bad_here ? "  <- over 100 ms" : ""
                  bad = bad || bad_here }
                END { if (m != n) { printf "  %d segments found, %d true\n", m, n; bad = 1 } exit bad }' \
    "$work/truth.txt" "$work/segments.txt" || { echo "FAIL"; status=1; }
done
[ $status -eq 0 ] && echo "PASS"
exit $status
