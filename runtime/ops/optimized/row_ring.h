// The kh input rows that one output row of a depthwise convolution reads (qlinear_depthwise.cc,
// conv_depthwise.cc), held in a ring of kh row slots plus a padding row. Consecutive output rows
// of a parallel chunk share it: a row converted for one output row is reused by the next ones
// (with stride 1, each output row converts one new input row instead of kh).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

namespace xonnx {
namespace opt {

constexpr int64_t kMaxRingRows = 16;  // the tallest kernel the ring takes

class RowRing {
 public:
  // Floats of storage a ring of kh rows of row_floats needs (with room to align it).
  static size_t floats_needed(int64_t kh, int64_t row_floats) {
    return static_cast<size_t>((kh + 1) * row_floats + 16);
  }

  // `storage` of floats_needed(kh, row_floats); rows start 64-byte aligned (row_floats being a
  // multiple of 16, no vector load of a row splits a cache line). `pad` fills the padding row's
  // first `pad_floats` floats (all by default): a caller that reads every block of the padding
  // row at its start needs one block filled, not the row.
  RowRing(float* storage, int64_t kh, int64_t row_floats, float pad, int64_t pad_floats = -1)
      : base_(storage + (64 - reinterpret_cast<uintptr_t>(storage) % 64) % 64 / sizeof(float)),
        kh_(kh),
        row_floats_(row_floats),
        pad_floats_(pad_floats < 0 ? row_floats : std::min(pad_floats, row_floats)),
        pad_(pad) {
    slot_row_.fill(-1);
  }

  // Slot s (0 <= s < kh) of the ring: where place() puts the input rows it assigns to it.
  float* slot(int64_t s) const { return base_ + s * row_floats_; }

  // For output row `oy` of image `img` (input rows oy * sh - pad_top + ky * dh of h): sets
  // rows[ky] to the slot holding that input row, or to the padding row, and input[ky] to the
  // row's index img * h + iy (-1: padding). Returns how many ky it wrote to `fresh`: those whose
  // slot was just assigned and must be filled by the caller before it is read.
  int64_t place(int64_t img, int64_t oy, int64_t h, int64_t sh, int64_t pad_top, int64_t dh, float** rows,
                int64_t* input, int64_t* fresh) {
    std::array<bool, kMaxRingRows> kept{};
    for (int64_t ky = 0; ky < kh_; ++ky) {
      const int64_t iy = oy * sh - pad_top + ky * dh;
      input[ky] = iy < 0 || iy >= h ? -1 : img * h + iy;
      rows[ky] = nullptr;
      for (int64_t s = 0; s < kh_ && input[ky] >= 0; ++s) {
        if (slot_row_[s] == input[ky]) {
          rows[ky] = slot(s);
          kept[s] = true;
        }
      }
    }
    int64_t n_fresh = 0;
    for (int64_t ky = 0; ky < kh_; ++ky) {
      if (rows[ky]) continue;
      if (input[ky] < 0) {
        rows[ky] = padding_row();
        continue;
      }
      int64_t s = 0;
      while (kept[s]) ++s;  // kh slots, fewer than kh of them kept
      kept[s] = true;
      slot_row_[s] = input[ky];
      rows[ky] = slot(s);
      fresh[n_fresh++] = ky;
    }
    return n_fresh;
  }

 private:
  float* padding_row() {
    float* row = base_ + kh_ * row_floats_;
    if (!pad_ready_) std::fill(row, row + pad_floats_, pad_);
    pad_ready_ = true;
    return row;
  }

  float* base_;
  int64_t kh_, row_floats_, pad_floats_;
  float pad_;
  bool pad_ready_ = false;
  std::array<int64_t, kMaxRingRows> slot_row_;  // the input row (img * h + iy) each slot holds
};

}  // namespace opt
}  // namespace xonnx
