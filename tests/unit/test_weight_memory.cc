// Weights are not held twice: misaligned model bytes are copied only when first read, and an
// initializer whose readers all packed it gives its memory back at session creation while
// staying readable (a fallback kernel reads it again).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "onnx.pb.h"
#include "platforms/posix/mapped_file.h"
#include "runtime/exec/session.h"

namespace xonnx {
namespace {

using onnxpb::ModelProto;
using onnxpb::TensorProto;

constexpr int64_t kK = 64, kN = 48;

class TempFile {
 public:
  explicit TempFile(const std::string& bytes) {
    char tmpl[] = "/tmp/xonnx_weights_XXXXXX";
    const int fd = mkstemp(tmpl);
    path_ = tmpl;
    if (fd >= 0) {
      EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
      close(fd);
    }
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<float> weights() {
  std::vector<float> b(static_cast<size_t>(kK * kN));
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>(i % 23) - 11) / 8.0f;
  return b;
}

// y = op(x, w): x a float graph input, w a float initializer named `w_name` (its length moves
// the raw bytes within the file, so some names leave them misaligned for float).
ModelProto one_node_model(const std::string& op, const std::vector<int64_t>& x_dims, const std::string& w_name,
                          const std::vector<int64_t>& w_dims, const std::vector<float>& w) {
  ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(TensorProto::FLOAT);
  for (int64_t d : x_dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  g->add_output()->set_name("y");
  auto* n = g->add_node();
  n->set_op_type(op);
  n->add_input("x");
  n->add_input(w_name);
  n->add_output("y");
  auto* t = g->add_initializer();
  t->set_name(w_name);
  t->set_data_type(TensorProto::FLOAT);
  for (int64_t d : w_dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float)));
  return m;
}

ModelProto matmul_model(const std::string& b_name) {
  return one_node_model("MatMul", {1, kK}, b_name, {kK, kN}, weights());
}

// Loads the model make(name) makes, written to `file`, for the first initializer name that
// leaves its bytes misaligned in the file.
Model load_misaligned(const std::function<ModelProto(const std::string&)>& make, std::unique_ptr<TempFile>& file) {
  for (int len = 1; len <= 8; ++len) {
    file = std::make_unique<TempFile>(make(std::string(static_cast<size_t>(len), 'w')).SerializeAsString());
    auto model = load_model(file->path());
    EXPECT_TRUE(model.is_ok()) << model.status().to_string();
    if (!model.is_ok()) break;
    if (!model->graph.initializers[0].tensor.is_view_of_external_memory()) return std::move(model).value();
  }
  ADD_FAILURE() << "no name length left the weights misaligned";
  return Model();
}

std::vector<float> expected_row(const std::vector<float>& a) {
  const std::vector<float> b = weights();
  std::vector<float> y(static_cast<size_t>(kN), 0.0f);
  for (int64_t j = 0; j < kN; ++j)
    for (int64_t k = 0; k < kK; ++k)
      y[static_cast<size_t>(j)] += a[static_cast<size_t>(k)] * b[static_cast<size_t>(k * kN + j)];
  return y;
}

void expect_runs_right(Session& s, const std::vector<float>& a) {
  auto out = s.run({Value(Tensor::from_vector<float>(a, {1, kK}))});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const Tensor& y = (*out)[0].tensor();
  const std::vector<float> want = expected_row(a);
  for (int64_t j = 0; j < kN; ++j) {
    const float got = y.data<float>()[j];
    if (std::isnan(want[static_cast<size_t>(j)])) {
      EXPECT_TRUE(std::isnan(got)) << j;
    } else if (std::isinf(want[static_cast<size_t>(j)])) {
      EXPECT_EQ(got, want[static_cast<size_t>(j)]) << j;
    } else {
      EXPECT_NEAR(got, want[static_cast<size_t>(j)], 1e-4f) << j;
    }
  }
}

TEST(WeightMemory, CopyOnAccessCopiesOnFirstReadAndAgainAfterDrop) {
  std::vector<uint8_t> bytes(4 * 100 + 1);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7);
  auto keep = std::make_shared<int>(0);
  auto s = Storage::copy_on_access(bytes.data() + 1, 400, keep);
  EXPECT_FALSE(s->resident());
  const void* p = s->data();
  EXPECT_TRUE(s->resident());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_EQ(std::memcmp(p, bytes.data() + 1, 400), 0);
  s->drop_resident();
  EXPECT_FALSE(s->resident());
  EXPECT_EQ(std::memcmp(s->data(), bytes.data() + 1, 400), 0);
}

TEST(WeightMemory, ReadingACopyOnAccessStorageMakesNoCopy) {
  std::vector<uint8_t> bytes(4 * 64 + 3);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 5 + 1);
  auto s = Storage::copy_on_access(bytes.data() + 3, 256, std::make_shared<int>(0));
  uint8_t part[40];
  s->read(100, sizeof(part), part);
  EXPECT_EQ(std::memcmp(part, bytes.data() + 103, sizeof(part)), 0);
  EXPECT_FALSE(s->resident());
  (void)s->data();
  s->read(7, sizeof(part), part);  // and from the copy once it exists
  EXPECT_EQ(std::memcmp(part, bytes.data() + 10, sizeof(part)), 0);
}

TEST(WeightMemory, ADerivedStorageIsMadeOnFirstAccessAndReadWithoutACopy) {
  int fills = 0;
  auto s = Storage::derived(256, [&fills](size_t offset, size_t n, void* dst) {
    ++fills;
    for (size_t i = 0; i < n; ++i) static_cast<uint8_t*>(dst)[i] = static_cast<uint8_t>((offset + i) * 3);
  });
  EXPECT_FALSE(s->resident());
  uint8_t part[40];
  s->read(100, sizeof(part), part);  // a packing kernel's read: the range only, no copy kept
  for (size_t i = 0; i < sizeof(part); ++i) EXPECT_EQ(part[i], static_cast<uint8_t>((100 + i) * 3)) << i;
  EXPECT_FALSE(s->resident());
  const auto* p = static_cast<const uint8_t*>(s->data());
  EXPECT_TRUE(s->resident());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  for (size_t i = 0; i < 256; ++i) EXPECT_EQ(p[i], static_cast<uint8_t>(i * 3)) << i;
  EXPECT_EQ(fills, 2);
  s->drop_resident();  // made again when read
  EXPECT_FALSE(s->resident());
  EXPECT_EQ(static_cast<const uint8_t*>(s->data())[255], static_cast<uint8_t>(255 * 3));
  EXPECT_EQ(fills, 3);
}

TEST(WeightMemory, DroppedFileViewStaysReadable) {
  std::string bytes(3 * 4096 + 100, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 13);
  TempFile file(bytes);
  std::string error;
  auto mapped = MappedFile::open(file.path(), &error);
  ASSERT_TRUE(mapped) << error;
  auto s = Storage::view(mapped->data(), mapped->size(), mapped, /*file_backed=*/true);
  EXPECT_EQ(std::memcmp(s->data(), bytes.data(), bytes.size()), 0);
  s->drop_resident();
  EXPECT_TRUE(s->resident());
  EXPECT_EQ(std::memcmp(s->data(), bytes.data(), bytes.size()), 0);
}

TEST(WeightMemory, LoaderDoesNotCopyMisalignedWeights) {
  std::unique_ptr<TempFile> file;
  Model model = load_misaligned(matmul_model, file);
  ASSERT_FALSE(model.graph.initializers.empty());
  const Tensor& b = model.graph.initializers[0].tensor;
  EXPECT_FALSE(b.storage()->resident());
  const std::vector<float> w = weights();
  EXPECT_EQ(std::memcmp(b.raw_data(), w.data(), w.size() * sizeof(float)), 0);
  EXPECT_TRUE(b.storage()->resident());
}

// False when CI's reference-only pass (XONNX_DISABLE_XNNPACK=1) leaves no packing kernel.
bool fast_kernels_allowed() {
  const char* disabled = std::getenv("XONNX_DISABLE_XNNPACK");
  return !(disabled && std::string(disabled) == "1");
}

TEST(WeightMemory, PackedWeightIsDroppedAndStillServesFallbacks) {
  for (bool xnnpack_only : {false, true}) {  // the own MatMul first, or XNNPACK's
    SCOPED_TRACE(xnnpack_only ? "XNNPACK fully connected" : "default kernels");
    std::unique_ptr<TempFile> file;
    Model model = load_misaligned(matmul_model, file);
    ASSERT_FALSE(model.graph.initializers.empty());
    // Not a shared_ptr: a second holder would (rightly) keep the session from freeing the copy.
    std::weak_ptr<Storage> b = model.graph.initializers[0].tensor.storage();
    SessionOptions options;
    options.disable_optimized = xnnpack_only;
    auto session = Session::create_from_model(std::move(model), options);
    ASSERT_TRUE(session.is_ok()) << session.status().to_string();
    const bool fast = fast_kernels_allowed();
    if (fast) {
      EXPECT_FALSE(b.lock()->resident()) << "a fast MatMul packed B: the loader's copy is gone";
    }
    std::vector<float> a(static_cast<size_t>(kK));
    for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<float>(k % 5) - 2.0f;
    expect_runs_right(**session, a);
    // Non-finite outputs send XNNPACK's kernel to the reference kernel, which reads B again
    // from the model file.
    a[3] = std::numeric_limits<float>::infinity();
    expect_runs_right(**session, a);
    if (fast && xnnpack_only) {
      EXPECT_TRUE(b.lock()->resident()) << "the fallback did not read B";
    }
    a[3] = std::numeric_limits<float>::quiet_NaN();
    expect_runs_right(**session, a);
  }
}

// A 3x3 Conv whose weights are misaligned in the file: the own kernel packs them without a
// copy of the initializer (Tensor::read_bytes), and the result matches the reference kernels.
TEST(WeightMemory, ConvPacksMisalignedWeightsWithoutACopy) {
  constexpr int64_t kC = 8, kM = 40;
  std::vector<float> w(static_cast<size_t>(kM * kC * 9));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 17) - 8) / 16.0f;
  const auto conv_model = [&w](const std::string& w_name) {
    ModelProto m = one_node_model("Conv", {1, kC, 9, 7}, w_name, {kM, kC, 3, 3}, w);
    auto* pads = m.mutable_graph()->mutable_node(0)->add_attribute();
    pads->set_name("pads");
    pads->set_type(onnxpb::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) pads->add_ints(1);
    return m;
  };
  std::unique_ptr<TempFile> file;
  Model model = load_misaligned(conv_model, file);
  ASSERT_FALSE(model.graph.initializers.empty());
  std::weak_ptr<Storage> weights = model.graph.initializers[0].tensor.storage();
  SessionOptions reference;
  reference.disable_xnnpack = true;
  auto want_session = Session::create(file->path(), reference);
  auto session = Session::create_from_model(std::move(model));
  ASSERT_TRUE(session.is_ok() && want_session.is_ok());
  if (fast_kernels_allowed()) {
    EXPECT_FALSE(weights.lock()->resident()) << "the packing kernel made a copy of the weights";
  }
  std::vector<float> x(static_cast<size_t>(kC * 9 * 7));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 11) - 5) / 4.0f;
  const Value input(Tensor::from_vector<float>(x, {1, kC, 9, 7}));
  auto got = (*session)->run({input});
  auto want = (*want_session)->run({input});
  ASSERT_TRUE(got.is_ok() && want.is_ok());
  const Tensor& a = (*got)[0].tensor();
  const Tensor& b = (*want)[0].tensor();
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-4f) << i;
}

TEST(WeightMemory, ASecondHolderKeepsTheCopy) {
  std::unique_ptr<TempFile> file;
  Model model = load_misaligned(matmul_model, file);
  ASSERT_FALSE(model.graph.initializers.empty());
  Model copy = model;  // another session may be built from (and running on) the same tensors
  const Tensor held = copy.graph.initializers[0].tensor;
  (void)held.raw_data();
  auto session = Session::create_from_model(std::move(model));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  EXPECT_TRUE(held.storage()->resident());
  const std::vector<float> w = weights();
  EXPECT_EQ(std::memcmp(held.raw_data(), w.data(), w.size() * sizeof(float)), 0);
}

TEST(WeightMemory, ALargeCopyIsMadePieceByPiece) {  // pieces of 4 MiB, the last one partial
  const size_t n = (size_t{9} << 20) + 12;
  std::vector<uint8_t> bytes(n + 3);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 31 + (i >> 12));
  auto s = Storage::copy_on_access(bytes.data() + 3, n, std::make_shared<int>(0));
  EXPECT_EQ(std::memcmp(s->data(), bytes.data() + 3, n), 0);
}

// The resident bytes of this process's mappings of `path` (/proc/self/smaps).
int64_t resident_bytes_of(const std::string& path) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_file = false;
  int64_t kb = 0;
  while (std::getline(smaps, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.find(' ') != std::string::npos &&
        line.find('-') < line.find(' ')) {
      in_file = line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0;
    } else if (in_file && line.rfind("Rss:", 0) == 0) {
      kb += std::stoll(line.substr(4));
    }
  }
  return kb * 1024;
}

TEST(WeightMemory, SmallReadsOfAMisalignedWeightGiveThePagesBackOnDrop) {
  // A transposed packing reads each row's piece of a few hundred bytes: Storage::read drops
  // whole pages only, so drop_resident() returns the rest.
  std::string bytes((size_t{2} << 20) + 64, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + (i >> 9));
  TempFile file(bytes);
  std::string error;
  auto mapped = MappedFile::open(file.path(), &error);
  ASSERT_TRUE(mapped) << error;
  const size_t n = size_t{2} << 20;
  auto s = Storage::copy_on_access(static_cast<const char*>(mapped->data()) + 1, n, mapped, /*file_backed=*/true);
  std::vector<char> piece(256);
  for (size_t at = 0; at + piece.size() <= n; at += 1024) s->read(at, piece.size(), piece.data());
  EXPECT_GT(resident_bytes_of(file.path()), int64_t{1} << 20);
  s->drop_resident();
  EXPECT_LT(resident_bytes_of(file.path()), 64 * 1024);
  s->read(4096, piece.size(), piece.data());  // still readable
  EXPECT_EQ(std::memcmp(piece.data(), bytes.data() + 1 + 4096, piece.size()), 0);
}

TEST(WeightMemory, ADerivedWeightGivesItsFileSourcesPagesBackOnDrop) {
  // A pass's weight made from a file view (columns of a packed q/k/v projection): packing
  // reads the view through the fill, and dropping the derived weight returns those pages.
  std::string bytes(size_t{2} << 20, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 5 + (i >> 10));
  TempFile file(bytes);
  std::string error;
  auto mapped = MappedFile::open(file.path(), &error);
  ASSERT_TRUE(mapped) << error;
  std::shared_ptr<const Storage> source = Storage::view(mapped->data(), mapped->size(), mapped, /*file_backed=*/true);
  auto half = Storage::derived(
      bytes.size() / 2, [source](size_t offset, size_t n, void* dst) { source->read(offset * 2, n, dst); }, source);
  std::vector<char> packed(bytes.size() / 2);
  half->read(0, packed.size(), packed.data());
  EXPECT_GT(resident_bytes_of(file.path()), int64_t{512} << 10);
  half->drop_resident();
  EXPECT_LT(resident_bytes_of(file.path()), 64 * 1024);
  half->read(1000, 16, packed.data());  // the source stays readable
  EXPECT_EQ(std::memcmp(packed.data(), bytes.data() + 2000, 16), 0);
}

// y = x * Transpose(w) + 0, written to a file with w's bytes aligned for a view of the mapping.
std::unique_ptr<TempFile> transposed_weight_model(const std::vector<float>& w, int64_t rows, int64_t cols) {
  const std::string name = "w";
  for (int len = 1; len <= 8; ++len) {  // the graph's name moves the bytes
    ModelProto m = one_node_model("MatMul", {1, cols}, name + "_t", {rows, cols}, w);
    auto* g = m.mutable_graph();
    g->set_name(std::string(static_cast<size_t>(len), 'g'));
    g->mutable_initializer(0)->set_name(name);
    auto* t = g->add_node();
    t->set_op_type("Transpose");
    t->add_input(name);
    t->add_output(name + "_t");
    g->mutable_node()->SwapElements(0, 1);
    // y = ... + b: b keeps the file mapped after w is dropped from the graph.
    g->mutable_node(1)->set_output(0, "p");
    auto* add = g->add_node();
    add->set_op_type("Add");
    add->add_input("p");
    add->add_input("b");
    add->add_output("y");
    auto* b = g->add_initializer();
    b->set_name("b");
    b->set_data_type(TensorProto::FLOAT);
    b->add_dims(rows);
    b->set_raw_data(std::string(static_cast<size_t>(rows) * sizeof(float), '\0'));
    auto file = std::make_unique<TempFile>(m.SerializeAsString());
    auto model = load_model(file->path());
    if (model.is_ok() && model->graph.initializers[0].tensor.is_view_of_external_memory()) return file;
  }
  ADD_FAILURE() << "no name length left the weights aligned";
  return nullptr;
}

TEST(WeightMemory, AWeightTheGraphPassesReplacedGivesItsPagesBack) {
  // Session creation folds the Transpose into a new constant, reading w from the file
  // mapping; w itself is then read by nobody.
  constexpr int64_t kRows = 1024, kCols = 1024;  // 4 MiB
  std::vector<float> w(static_cast<size_t>(kRows * kCols));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 29) - 14) / 16.0f;
  std::unique_ptr<TempFile> file = transposed_weight_model(w, kRows, kCols);
  ASSERT_TRUE(file);
  SessionOptions options;
  options.disable_xnnpack = true;  // the reference MatMul keeps the folded constant: only w's pages are in question
  options.disable_optimized = true;
  auto session = Session::create(file->path(), options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  EXPECT_LT(resident_bytes_of(file->path()), 256 * 1024) << "w's pages stayed resident after the folding read them";
  std::vector<float> x(static_cast<size_t>(kCols), 0.0f);
  x[3] = 1.0f;  // picks row 3 of w^T: column 3 of w
  auto out = (*session)->run({Value(Tensor::from_vector<float>(x, {1, kCols}))});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  for (int64_t j = 0; j < kRows; ++j) {
    ASSERT_EQ((*out)[0].tensor().data<float>()[j], w[static_cast<size_t>(j * kCols + 3)]) << j;
  }
}

}  // namespace
}  // namespace xonnx
