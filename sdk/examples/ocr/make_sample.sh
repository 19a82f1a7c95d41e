#!/usr/bin/env bash
# Renders the OCR demo's built-in page: six lines of text in several DejaVu fonts and sizes on
# a 640x480 white page, one line tilted by 7 degrees and one upside down (for the angle
# classifier), and writes the true text, one line per line in reading order.
#   sdk/examples/ocr/make_sample.sh IMAGE TRUTH.txt
# IMAGE's extension picks the format (.ppm for the demo program, .png to look at). Needs
# ImageMagick (convert-im6.q16) and fonts-dejavu-core; the output is the same on every run.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 IMAGE TRUTH.txt" >&2; exit 2; }
FONTS=/usr/share/fonts/truetype/dejavu
# font, point size, ImageMagick -annotate geometry (rotation and baseline origin), text
LINES=(
  "DejaVuSans-Bold.ttf|30|+30+55|Edge inference with xonnx"
  "DejaVuSerif.ttf|22|+30+110|Invoice 2024-117: total 348.50 EUR"
  "DejaVuSans.ttf|20|+30+160|Pack my box with five dozen jugs"
  "DejaVuSansMono.ttf|24|353x353+30+250|Tilted by seven degrees"
  "DejaVuSerif-Bold.ttf|26|180x180+420+330|Upside down line"
  "DejaVuSansMono-Bold.ttf|16|+30+420|Small print: 0123456789"
)
args=()
: > "$2"
for spec in "${LINES[@]}"; do
  IFS='|' read -r font size geometry text <<< "$spec"
  args+=(-font "$FONTS/$font" -pointsize "$size" -annotate "$geometry" "$text")
  printf '%s\n' "$text" >> "$2"
done
convert-im6.q16 -size 640x480 xc:white -fill black "${args[@]}" -depth 8 -strip "$1"
