#!/usr/bin/env bash
# Makes the VAD demo's built-in recording: sentences spoken by espeak-ng, joined by sox with
# silences of known lengths, and the true speech segments ("start-end" seconds, one per line).
#   sdk/examples/vad/make_sample.sh OUT.wav TRUTH.txt [SECONDS] [RATE] [CHANNELS] [ENCODING]
# SECONDS: length to fill (default 20); RATE, CHANNELS: of the written file (default 44100, 2);
# ENCODING: pcm16, pcm24 or float (default float). Several channels are written as sox does,
# WAVE_FORMAT_EXTENSIBLE; the speech is the same in every channel. Each sentence is trimmed to
# where its sound starts and ends (0.3% of full scale), so the segments are exact to the
# sample. Needs espeak-ng and sox; the output is the same on every run.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
OUT=$1 TRUTH=$2 SECONDS_TOTAL=${3:-20} RATE=${4:-44100} CHANNELS=${5:-2} ENCODING=${6:-float}
case "$ENCODING" in
  pcm16) enc=(-e signed-integer -b 16) ;;
  pcm24) enc=(-e signed-integer -b 24) ;;
  float) enc=(-e floating-point -b 32) ;;
  *) echo "unknown encoding '$ENCODING' (pcm16, pcm24, float)" >&2; exit 2 ;;
esac
SENTENCES=(
  "Voice activity detection finds the parts of a recording that hold speech"
  "The model reads thirty two milliseconds of audio at a time"
  "Silence between the sentences is cut away"
  "This runs on a small board without a network connection"
  "Each frame gives the probability that someone is talking"
  "The segments are printed with their start and end times"
  "Edge devices keep the audio to themselves"
  "Short pauses inside a sentence do not split it"
)
GAPS=(1.2 0.9 2.0 0.7 1.6 1.1 2.4 0.8 1.4 1.9)  # seconds of silence before each sentence
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
RAW_RATE=22050  # espeak-ng's own rate: the pieces are joined there, sample-exact
parts=()
: > "$TRUTH"
t=0  # samples at RAW_RATE
i=0
while :; do
  gap=${GAPS[$((i % ${#GAPS[@]}))]}
  sox -n -r $RAW_RATE -c 1 -b 16 "$work/gap$i.wav" trim 0 "$gap"
  espeak-ng -v en-us -s 165 -w "$work/raw$i.wav" "${SENTENCES[$((i % ${#SENTENCES[@]}))]}"
  sox "$work/raw$i.wav" -r $RAW_RATE -c 1 -b 16 "$work/speech$i.wav" \
    silence 1 1s 0.3% reverse silence 1 1s 0.3% reverse
  gap_n=$(soxi -s "$work/gap$i.wav")
  speech_n=$(soxi -s "$work/speech$i.wav")
  if [ $(( (t + gap_n + speech_n) )) -gt $(( SECONDS_TOTAL * RAW_RATE )) ] && [ $i -gt 0 ]; then break; fi
  start=$((t + gap_n))
  t=$((start + speech_n))
  awk -v a="$start" -v b="$t" -v r=$RAW_RATE 'BEGIN { printf "%.4f-%.4f\n", a / r, b / r }' >> "$TRUTH"
  parts+=("$work/gap$i.wav" "$work/speech$i.wav")
  i=$((i + 1))
done
# Silence to the requested length, then the file's rate, channels and encoding.
sox "${parts[@]}" "$work/joined.wav"
sox "$work/joined.wav" -r "$RATE" -c "$CHANNELS" "${enc[@]}" "$OUT" pad 0 "$(awk -v t="$t" -v s="$SECONDS_TOTAL" -v r=$RAW_RATE 'BEGIN { p = s - t / r; print (p > 0 ? p : 0) }')"
