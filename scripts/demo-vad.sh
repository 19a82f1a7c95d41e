#!/usr/bin/env bash
# Voice activity demo: finds the speech in a WAV file with silero VAD v5 on xonnx, prints the
# segments as start-end seconds and writes the waveform with the segments drawn.
#   bash scripts/demo-vad.sh [WAV] [--aarch64] [-- XONNX-VAD OPTIONS]
# WAV: any sample rate and channel count, PCM 8/16/24/32-bit or float (resampled to 16 kHz, or
# to silero's 8 kHz mode from 8 kHz and below);
# default: 20 s of espeak-ng sentences and silences joined by sox (44.1 kHz stereo float),
# whose true segments are then compared too.
# --aarch64: cross-build for 64-bit ARM and run it under qemu-aarch64 (a Cortex-A72).
# Installs what is missing (apt, npm: scripts/install-demo-deps.sh), builds build/bin/xonnx-vad,
# writes build/demos/vad/vad-segments.png.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/demo-common.sh
demo_args "$@"
WAV=$DEMO_INPUT
MODELS=$(bash scripts/install-demo-deps.sh vad | tail -1)
demo_build xonnx_vad xonnx-vad vad "$DEMO_ARCH"
args=(--model "$MODELS/silero_vad_v5.onnx" -o "$DEMO_OUT/vad-segments.ppm")
if [ -z "$WAV" ]; then
  WAV=$DEMO_OUT/speech.wav
  bash sdk/examples/vad/make_sample.sh "$WAV" "$DEMO_OUT/truth.txt"
  args+=(--truth "$DEMO_OUT/truth.txt")
fi
# Real-time factor: the median of 5 more passes (under emulation a pass's time says little).
if [ "$DEMO_ARCH" = host ]; then args+=(--repeat 5); fi
echo "== speech segments, seconds (xonnx-vad, $DEMO_ARCH)" >&2
"${DEMO_RUN[@]}" "$WAV" "${args[@]}" ${DEMO_EXTRA[@]+"${DEMO_EXTRA[@]}"}
convert-im6.q16 "$DEMO_OUT/vad-segments.ppm" -strip "$DEMO_OUT/vad-segments.png"
echo "segments drawn: $DEMO_OUT/vad-segments.png" >&2
