#!/usr/bin/env bash
# OCR demo: reads the text in an image with PP-OCRv4 (detection, angle classification,
# recognition) on xonnx, prints the lines in reading order and writes the image with the boxes.
#   bash scripts/demo-ocr.sh [IMAGE] [--aarch64] [-- XONNX-OCR OPTIONS]
# IMAGE: any format ImageMagick reads; default: a rendered 640x480 page of six lines (several
# fonts and sizes, one tilted, one upside down), whose true text is then compared too.
# --aarch64: cross-build for 64-bit ARM and run it under qemu-aarch64 (a Cortex-A72).
# Installs what is missing (apt, npm: scripts/install-demo-deps.sh), builds build/bin/xonnx-ocr,
# writes build/demos/ocr/ocr-boxes.png.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/demo-common.sh
demo_args "$@"
IMAGE=$DEMO_INPUT
MODELS=$(bash scripts/install-demo-deps.sh ocr | tail -1)
demo_build xonnx_ocr xonnx-ocr ocr "$DEMO_ARCH"
args=(--models "$MODELS" -o "$DEMO_OUT/ocr-boxes.ppm")
if [ -n "$IMAGE" ]; then
  # Any format to 8-bit RGB PPM (transparency over white), as the program on a device reads it.
  convert-im6.q16 "$IMAGE" -background white -alpha remove -alpha off -colorspace sRGB -type TrueColor \
    -depth 8 "$DEMO_OUT/page.ppm"
else
  bash sdk/examples/ocr/make_sample.sh "$DEMO_OUT/page.ppm" "$DEMO_OUT/truth.txt"
  args+=(--truth "$DEMO_OUT/truth.txt")
fi
# Time per image: the median of 5 more passes (under emulation a pass's time says little).
if [ "$DEMO_ARCH" = host ]; then args+=(--repeat 5); fi
echo "== recognised lines (xonnx-ocr, $DEMO_ARCH)" >&2
"${DEMO_RUN[@]}" "$DEMO_OUT/page.ppm" "${args[@]}" ${DEMO_EXTRA[@]+"${DEMO_EXTRA[@]}"}
convert-im6.q16 "$DEMO_OUT/ocr-boxes.ppm" -strip "$DEMO_OUT/ocr-boxes.png"
echo "boxes drawn: $DEMO_OUT/ocr-boxes.png" >&2
