#!/usr/bin/env bash
# End to end: renders the OCR demo's page (sdk/examples/ocr/make_sample.sh), reads it with
# xonnx-ocr on the published PP-OCR models and checks the lines against the rendered text:
# same lines in the same order, every character right. Spaces are left out of the comparison:
# PP-OCRv4's Chinese recognizer omits most spaces between Latin words (ONNX Runtime reads the
# same); the character error rate with and without them is printed.
#   ocr_e2e.sh SOURCE_DIR WORK_DIR PROGRAM...   (PROGRAM may start with an emulator)
set -euo pipefail
src=$1 work=$2
shift 2
models=$(bash "$src/scripts/install-demo-deps.sh" ocr | tail -1)
rm -rf "$work"
mkdir -p "$work"
bash "$src/sdk/examples/ocr/make_sample.sh" "$work/page.ppm" "$work/truth.txt"
"$@" "$work/page.ppm" --models "$models" --truth "$work/truth.txt" -o "$work/boxes.ppm" > "$work/lines.txt"
echo "recognised:"
sed 's/^/  /' "$work/lines.txt"
if ! diff <(tr -d ' ' < "$work/truth.txt") <(tr -d ' ' < "$work/lines.txt"); then
  echo "FAIL: the recognised lines differ from the rendered text (spaces left out; < rendered, > recognised)"
  exit 1
fi
# The picture: the page's size, with box pixels drawn (neither white nor grey text pixels).
header=$(head -c 15 "$work/boxes.ppm" | tr '\n' ' ')
case "$header" in "P6 640 480 255 "*) ;; *) echo "FAIL: boxes.ppm header '$header'"; exit 1 ;; esac
echo "PASS"
