// Optimized GRU and LSTM (float32, the default activations, no clip: what torch.nn.GRU and
// nn.LSTM export). The input projections of all time steps are one GEMM over W packed once at
// session creation; each step's recurrent projection is one pass over R transposed once; gates
// use the table's vectorized sigmoid and tanh. Peepholes, input_forget, other activations and
// non-constant weights go to the reference kernels (ref/rnn.cc), which define the semantics
// and report the errors.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

enum class Cell { kGru, kLstm };

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

template <Cell K>
class RecurrentKernel final : public FastKernel {
  static constexpr int64_t G = K == Cell::kGru ? 3 : 4;  // gates: GRU z r h, LSTM i o f c

 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    const char* op = K == Cell::kGru ? "GRU" : "LSTM";
    auto k = std::unique_ptr<RecurrentKernel>(new RecurrentKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    XONNX_ASSIGN_OR_RETURN(std::string direction, init.get_string("direction", "forward"));
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
      return unsupported(op, ": direction '", direction, "' (the reference kernel reports it)");
    }
    k->dirs_ = direction == "bidirectional" ? 2 : 1;
    k->reverse_only_ = direction == "reverse";
    XONNX_ASSIGN_OR_RETURN(std::vector<std::string> acts, init.get_strings("activations"));
    const std::vector<std::string> defaults = K == Cell::kGru ? std::vector<std::string>{"sigmoid", "tanh"}
                                                              : std::vector<std::string>{"sigmoid", "tanh", "tanh"};
    if (!acts.empty() && acts.size() != defaults.size() && acts.size() != defaults.size() * k->dirs_) {
      return unsupported(op, ": activations of an unexpected count (the reference kernel reports it)");
    }
    for (size_t i = 0; i < acts.size(); ++i) {
      if (lower(acts[i]) != defaults[i % defaults.size()]) {
        return unsupported(op, ": the optimized kernel has the default activations only");
      }
    }
    if (init.has_attr("clip")) return unsupported(op, ": the optimized kernel has no clip");
    XONNX_ASSIGN_OR_RETURN(int64_t input_forget, init.get_int("input_forget", 0));
    if (input_forget != 0) return unsupported(op, ": the optimized kernel has no input_forget");
    XONNX_ASSIGN_OR_RETURN(int64_t lbr, init.get_int("linear_before_reset", 0));
    k->linear_before_reset_ = lbr != 0;
    XONNX_ASSIGN_OR_RETURN(k->layout_, init.get_int("layout", 0));
    const Tensor* w = init.constant_input(1);
    const Tensor* r = init.constant_input(2);
    if (!w || !r || !is_f32(*w) || !is_f32(*r) || w->rank() != 3 || r->rank() != 3 || w->dim(0) != k->dirs_ ||
        r->dim(0) != k->dirs_ || r->dim(1) != G * r->dim(2) || w->dim(1) != r->dim(1) || r->dim(2) <= 0 ||
        w->dim(2) <= 0 || (k->layout_ != 0 && k->layout_ != 1)) {
      return unsupported(op, ": the optimized kernel takes constant float32 W and R of matching shapes");
    }
    XONNX_ASSIGN_OR_RETURN(int64_t hidden, init.get_int("hidden_size", r->dim(2)));
    if (hidden != r->dim(2)) return unsupported(op, ": hidden_size differs from R's");
    k->pack(*w, *r);
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  // W^T of each direction as gemm_panel reads it. R^T of each direction in column blocks of at
  // most 2 nr hidden units (gemm_direct's widest step), per block the G gates' [H][width] one
  // after another: a step's task (one block) reads one contiguous stretch of R, front to back
  // (in place, R^T's rows are G * H apart, a page each at H 256: lstm_acoustic's steps took a
  // fifth longer).
  void pack(const Tensor& w, const Tensor& r) {
    const KernelTable& t = *k_;
    H_ = r.dim(2);
    in_ = w.dim(2);
    const int64_t gh = G * H_, nr = t.nr, panels = (gh + nr - 1) / nr;
    std::vector<float> wt(static_cast<size_t>(std::max(in_, H_) * gh));
    w_packed_.assign(static_cast<size_t>(dirs_ * panels * in_ * nr), 0.0f);
    r_blocks_.resize(static_cast<size_t>(dirs_ * H_ * gh));
    for (int64_t d = 0; d < dirs_; ++d) {
      t.transpose_2d(w.data<float>() + d * gh * in_, in_, wt.data(), gh, gh, in_);
      float* packed = w_packed_.data() + d * panels * in_ * nr;
      for (int64_t p = 0; p < panels; ++p) {
        t.pack_b(wt.data() + p * nr, gh, in_, std::min(nr, gh - p * nr), packed + p * in_ * nr);
      }
      t.transpose_2d(r.data<float>() + d * gh * H_, H_, wt.data(), gh, gh, H_);
      float* dst = r_blocks_.data() + d * H_ * gh;
      for (int64_t col = 0; col < H_; col += block_width()) {
        const int64_t width = std::min(block_width(), H_ - col);
        for (int64_t g = 0; g < G; ++g) {
          for (int64_t k = 0; k < H_; ++k) dst = std::copy_n(wt.data() + k * gh + g * H_ + col, width, dst);
        }
      }
    }
  }

  int64_t block_width() const { return 2 * k_->nr; }
  int64_t blocks() const { return (H_ + block_width() - 1) / block_width(); }
  // Gate g's [H][width] of the column block that starts at unit col, in direction d's R.
  const float* r_block(int64_t d, int64_t col, int64_t g) const {
    return r_blocks_.data() + d * H_ * G * H_ + H_ * (G * col + g * std::min(block_width(), H_ - col));
  }

  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.rank() != 3 || x.dim(2) != in_) return Status::ok();
    if (K == Cell::kLstm && ctx.has_input(7)) return Status::ok();  // peepholes
    const int64_t seq = layout_ == 0 ? x.dim(0) : x.dim(1), batch = layout_ == 0 ? x.dim(1) : x.dim(0);
    if (seq == 0 || batch == 0) return Status::ok();
    const int64_t gh = G * H_;
    const Shape state_shape = layout_ == 0 ? Shape{dirs_, batch, H_} : Shape{batch, dirs_, H_};
    const float* bias = nullptr;
    if (ctx.has_input(3)) {
      if (!is_f32(ctx.input(3)) || ctx.input(3).shape() != Shape{dirs_, 2 * gh}) return Status::ok();
      bias = ctx.input(3).data<float>();
    }
    lens_.assign(static_cast<size_t>(batch), seq);
    if (ctx.has_input(4)) {
      const Tensor& sl = ctx.input(4);
      if (!dtype_is_integer(sl.dtype()) || sl.shape() != Shape{batch}) return Status::ok();
      for (int64_t b = 0; b < batch; ++b) {
        lens_[b] = sl.get_as_int64(b);
        if (lens_[b] < 0 || lens_[b] > seq) return Status::ok();
      }
    }
    const float* init_h = nullptr;
    const float* init_c = nullptr;
    for (size_t i : {size_t{5}, size_t{6}}) {
      if (i == 6 && K != Cell::kLstm) break;
      if (!ctx.has_input(i)) continue;
      if (!is_f32(ctx.input(i)) || ctx.input(i).shape() != state_shape) return Status::ok();
      (i == 5 ? init_h : init_c) = ctx.input(i).data<float>();
    }

    float* y = nullptr;
    if (ctx.output_wanted(0)) {
      const Shape yshape = layout_ == 0 ? Shape{seq, dirs_, batch, H_} : Shape{batch, seq, dirs_, H_};
      XONNX_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(0, DataType::kFloat, yshape));  // zeros past a length
      y = t->data<float>();
    }
    float* y_h = nullptr;
    float* y_c = nullptr;
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      XONNX_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output_uninitialized(1, DataType::kFloat, state_shape));
      y_h = t->data<float>();
    }
    if (K == Cell::kLstm && ctx.num_outputs() > 2 && ctx.output_wanted(2)) {
      XONNX_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output_uninitialized(2, DataType::kFloat, state_shape));
      y_c = t->data<float>();
    }

    gx_.resize(static_cast<size_t>(seq * batch * gh));
    gh_.resize(static_cast<size_t>(batch * gh));
    h_.resize(static_cast<size_t>(2 * batch * H_));  // the state and, for fused steps, the next one
    c_.resize(static_cast<size_t>(batch * H_));
    tmp_.resize(static_cast<size_t>(gh));  // the merged bias row
    // State index of (direction, batch row) in the layout of Y_h / initial_h.
    auto state_at = [&](int64_t d, int64_t b) { return (layout_ == 0 ? d * batch + b : b * dirs_ + d) * H_; };
    const bool fused = K == Cell::kLstm || linear_before_reset_;
    for (int64_t d = 0; d < dirs_; ++d) {
      project_inputs(x.data<float>(), seq * batch, d, bias ? bias + d * 2 * gh : nullptr);
      float* h = h_.data();
      float* h_next = h + batch * H_;
      for (int64_t b = 0; b < batch; ++b) {
        if (init_h)
          std::copy_n(init_h + state_at(d, b), H_, h + b * H_);
        else
          std::fill_n(h + b * H_, H_, 0.0f);
        if (init_c)
          std::copy_n(init_c + state_at(d, b), H_, c_.data() + b * H_);
        else
          std::fill_n(c_.data() + b * H_, H_, 0.0f);
      }
      Step s;
      s.d = d;
      s.reverse = reverse_only_ || d == 1;
      s.batch = batch;
      s.seq = seq;
      s.r_bias = bias ? bias + d * 2 * gh + gh : nullptr;
      s.y = y;
      for (s.step = 0; s.step < seq; ++s.step) {
        if (fused) {
          fused_step(s, h, h_next);
          std::swap(h, h_next);
          continue;
        }
        recurrent(d, 0, 2, batch, h, gh_.data(), gh);  // z and r; h's product needs r first
        for (int64_t b = 0; b < batch; ++b) {
          if (s.step >= lens_[b]) continue;
          float* hb = h + b * H_;
          gru_cell_reset_first(d, gx_of(s, b), gh_.data() + b * gh, hb);
          store_y(s, b, hb, 0, H_);
        }
      }
      for (int64_t b = 0; b < batch; ++b) {
        if (y_h) std::copy_n(h + b * H_, H_, y_h + state_at(d, b));
        if (y_c) std::copy_n(c_.data() + b * H_, H_, y_c + state_at(d, b));
      }
    }
    handled = true;
    return Status::ok();
  }

  // gx_[rows, gh] = X W^T + W's bias, plus R's bias where it adds outside the reset gate.
  void project_inputs(const float* x, int64_t rows, int64_t d, const float* bias) {
    const KernelTable& t = *k_;
    const int64_t gh = G * H_, nr = t.nr, panels = (gh + nr - 1) / nr;
    const float* packed = w_packed_.data() + d * panels * in_ * nr;
    float* gx = gx_.data();
    pool_->parallel_for(static_cast<size_t>(panels), chunk_for(rows * in_ * nr), [&](size_t begin, size_t end) {
      for (size_t p = begin; p < end; ++p) {
        const int64_t col = static_cast<int64_t>(p) * nr;
        t.gemm_panel(rows, in_, x, in_, packed + col * in_, std::min(nr, gh - col), gx + col, gh);
      }
    });
    if (!bias) return;
    // GRU with linear_before_reset: R's bias of the h gate is scaled by the reset gate.
    const int64_t merged = K == Cell::kGru && linear_before_reset_ ? 2 * H_ : gh;
    for (int64_t j = 0; j < gh; ++j) tmp_[j] = bias[j] + (j < merged ? bias[gh + j] : 0.0f);
    t.binary(BinaryOp::kAdd, false, gx, tmp_.data(), false, gx, gh, rows);
  }

  // One time step of one direction.
  struct Step {
    int64_t d = 0, step = 0, batch = 1, seq = 1;
    bool reverse = false;
    const float* r_bias = nullptr;  // R's bias of this direction, or null
    float* y = nullptr;             // Y, or null when not wanted
  };
  // The time index of batch row b at step s (the row has not ended: s.step < its length).
  int64_t time_of(const Step& s, int64_t b) const { return s.reverse ? lens_[b] - 1 - s.step : s.step; }
  const float* gx_of(const Step& s, int64_t b) const {
    const int64_t t = time_of(s, b);
    return gx_.data() + (layout_ == 0 ? t * s.batch + b : b * s.seq + t) * G * H_;
  }
  // Units [j0, j0 + n) of row b's new state h into Y.
  void store_y(const Step& s, int64_t b, const float* h, int64_t j0, int64_t n) const {
    if (!s.y) return;
    const int64_t t = time_of(s, b);
    const int64_t at = layout_ == 0 ? (t * dirs_ + s.d) * s.batch + b : (b * s.seq + t) * dirs_ + s.d;
    std::copy_n(h + j0, n, s.y + at * H_ + j0);
  }

  // An LSTM's step, or a GRU's with linear_before_reset, split by column blocks of hidden
  // units: a chunk computes its units' G gate columns of h R^T and then their cells, so the
  // cells run in parallel too and a step is one fork and join (2 threads: 2-5 % faster than
  // the products in parallel, then the cells on the caller). Every chunk reads all of h; the
  // new state goes to h_next (c is updated in place, unit by unit). Every other step runs its
  // blocks backwards: R (1 MB at H 256, 3 MB for a GRU at 512) is about an L2's size, and a
  // cache that evicts the least recently used line misses on every line of a loop slightly
  // larger than itself; backwards, the lines read last come first.
  void fused_step(const Step& s, const float* h, float* h_next) {
    const KernelTable& k = *k_;
    const int64_t bw = block_width(), gh = G * H_, batch = s.batch;
    const bool backwards = (passes_++ & 1) != 0;
    pool_->parallel_for(static_cast<size_t>(blocks()), chunk_for(batch * G * H_ * bw), [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        const int64_t col = static_cast<int64_t>(backwards ? begin + end - 1 - i : i) * bw;
        const int64_t width = std::min(bw, H_ - col);
        for (int64_t gi = 0; gi < G; ++gi) {
          const int64_t g = backwards ? G - 1 - gi : gi;
          k.gemm_direct(batch, width, H_, h, H_, r_block(s.d, col, g), width, gh_.data() + g * H_ + col, gh);
        }
      }
      // Then the cells of the chunk's units in one pass (a pass per block: 1-2 % slower).
      const int64_t j0 = static_cast<int64_t>(begin) * bw, n = std::min(H_, static_cast<int64_t>(end) * bw) - j0;
      for (int64_t b = 0; b < batch; ++b) {
        const float* hb = h + b * H_;
        float* nb = h_next + b * H_;
        if (s.step >= lens_[b]) {  // ended: the state stays
          std::copy_n(hb + j0, n, nb + j0);
          continue;
        }
        float* gr = gh_.data() + b * gh;
        if (K == Cell::kLstm) {
          lstm_units(gx_of(s, b), gr, c_.data() + b * H_, nb, j0, n);
        } else {
          gru_units(gx_of(s, b), gr, s.r_bias, hb, nb, j0, n);
        }
        store_y(s, b, nb, j0, n);
      }
    });
  }

  // c[batch, g0 H .. g1 H) = a[batch, H] R^T of gates [g0, g1) of direction d (c rows ldc
  // apart): the column blocks split over the pool when they are many (a GRU without
  // linear_before_reset, whose h gate's product needs the reset gate of every unit first).
  void recurrent(int64_t d, int64_t g0, int64_t g1, int64_t batch, const float* a, float* c, int64_t ldc) {
    const KernelTable& k = *k_;
    const int64_t bw = block_width(), nb = blocks();
    pool_->parallel_for(static_cast<size_t>((g1 - g0) * nb), chunk_for(batch * H_ * bw), [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        const int64_t g = g0 + static_cast<int64_t>(i) / nb, col = static_cast<int64_t>(i) % nb * bw;
        const int64_t width = std::min(bw, H_ - col);
        k.gemm_direct(batch, width, H_, a, H_, r_block(d, col, g), width, c + g * H_ + col, ldc);
      }
    });
  }

  void sigmoid(float* v, int64_t n) { k_->sigmoid(v, v, n); }
  void tanh(float* v, int64_t n) { k_->tanh(v, v, n); }

  // Units [j0, j0 + n) of an LSTM cell, gates i, o, f, c (gr: this row's h R^T, gates H apart):
  // c' = f c + i tanh(g_c), h' = o tanh(c').
  void lstm_units(const float* gx, float* gr, float* c, float* h, int64_t j0, int64_t n) {
    const int64_t H = H_;
    for (int64_t g = 0; g < 4; ++g)
      for (int64_t j = j0; j < j0 + n; ++j) gr[g * H + j] += gx[g * H + j];
    for (int64_t g = 0; g < 3; ++g) sigmoid(gr + g * H + j0, n);
    tanh(gr + 3 * H + j0, n);
    const float* i = gr;
    const float* o = gr + H;
    const float* f = gr + 2 * H;
    const float* cg = gr + 3 * H;
    for (int64_t j = j0; j < j0 + n; ++j) c[j] = f[j] * c[j] + i[j] * cg[j];
    std::copy_n(c + j0, n, h + j0);
    tanh(h + j0, n);
    for (int64_t j = j0; j < j0 + n; ++j) h[j] *= o[j];
  }

  // Units [j0, j0 + n) of a GRU cell with linear_before_reset, gates z, r, h:
  // h' = (1 - z) tanh(gx_h + r (.) (h R_h^T + Rb_h)) + z h (R's other biases are in gx).
  void gru_units(const float* gx, float* gr, const float* r_bias, const float* h, float* h_next, int64_t j0,
                 int64_t n) {
    const int64_t H = H_;
    for (int64_t g = 0; g < 2; ++g)
      for (int64_t j = j0; j < j0 + n; ++j) gr[g * H + j] += gx[g * H + j];
    sigmoid(gr + j0, n);
    sigmoid(gr + H + j0, n);
    const float* z = gr;
    const float* r = gr + H;
    float* hg = gr + 2 * H;
    for (int64_t j = j0; j < j0 + n; ++j) hg[j] = gx[2 * H + j] + r[j] * (hg[j] + (r_bias ? r_bias[2 * H + j] : 0.0f));
    tanh(hg + j0, n);
    for (int64_t j = j0; j < j0 + n; ++j) h_next[j] = hg[j] + z[j] * (h[j] - hg[j]);
  }

  // A GRU cell without linear_before_reset, in place: h' = (1 - z) tanh(gx_h + (r (.) h) R_h^T +
  // Rb_h) + z h. gr holds h R^T of z and r; R's bias of h is merged into gx there.
  void gru_cell_reset_first(int64_t d, const float* gx, float* gr, float* h) {
    const int64_t H = H_;
    for (int64_t j = 0; j < 2 * H; ++j) gr[j] += gx[j];
    sigmoid(gr, 2 * H);  // z, r
    const float* z = gr;
    const float* r = gr + H;
    float* n = gr + 2 * H;
    float* rh = c_.data();  // the GRU has no cell state: c_ is free scratch
    for (int64_t j = 0; j < H; ++j) rh[j] = r[j] * h[j];
    recurrent(d, 2, 3, 1, rh, gr, G * H);
    for (int64_t j = 0; j < H; ++j) n[j] += gx[2 * H + j];
    tanh(n, H);
    for (int64_t j = 0; j < H; ++j) h[j] = n[j] + z[j] * (h[j] - n[j]);
  }

  int64_t dirs_ = 1;
  bool reverse_only_ = false;
  bool linear_before_reset_ = false;
  int64_t layout_ = 0;
  int64_t H_ = 0;
  int64_t in_ = 0;
  AlignedVector<float> w_packed_;  // [dirs][panels][in][nr]; 64-byte aligned, read as whole vectors
  AlignedVector<float> r_blocks_;  // [dirs][column blocks][G][H][block width]
  uint64_t passes_ = 0;            // fused steps so far, for the direction of the next
  std::vector<int64_t> lens_;
  std::vector<float> gx_, gh_, h_, c_, tmp_;
  const KernelTable* k_ = &kernels();
};

}  // namespace

void register_opt_rnn(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "GRU", 1, kLatestVersion, RecurrentKernel<Cell::kGru>::create, Backend::kOptimized);
  XONNX_REGISTER(registry, "", "LSTM", 1, kLatestVersion, RecurrentKernel<Cell::kLstm>::create, Backend::kOptimized);
}

}  // namespace opt
}  // namespace xonnx
