// Memory an idle session does not need is not resident: large zero-filled storages (a KV
// cache, the buffers of the session's pool) are the OS's zero pages until written, discard()
// hands written pages back, and Session::trim_memory() does so for the pool's idle buffers
// while keeping them (the next run allocates nothing new and computes the same).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "onnx.pb.h"
#include "runtime/exec/session.h"

namespace xonnx {
namespace {

// Resident pages among the whole pages of [p, p + bytes) (mincore).
size_t resident_pages(const void* p, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) / page * page;
  if (end <= begin) return 0;
  std::vector<unsigned char> vec((end - begin) / page);
  EXPECT_EQ(mincore(reinterpret_cast<void*>(begin), end - begin, vec.data()), 0);
  size_t n = 0;
  for (unsigned char v : vec) n += v & 1;
  return n;
}

size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

TEST(IdleMemory, LargeStorageIsResidentOnlyWhereWritten) {
  const size_t bytes = 8 << 20;
  auto s = Storage::allocate(bytes);
  ASSERT_TRUE(s);
  char* p = static_cast<char*>(s->data());
  EXPECT_EQ(resident_pages(p, bytes), 0u);
  EXPECT_EQ(p[bytes / 2], 0);  // reads zeros, still without taking a page per read
  std::memset(p + bytes / 4, 1, 3 * page_size());
  EXPECT_LE(resident_pages(p, bytes), 5u);
  EXPECT_GE(resident_pages(p, bytes), 3u);
}

TEST(IdleMemory, DiscardReturnsWholePagesAndReadsZeros) {
  const size_t bytes = 1 << 20, page = page_size();
  auto s = Storage::allocate(bytes);
  ASSERT_TRUE(s);
  unsigned char* p = static_cast<unsigned char*>(s->data());
  std::memset(p, 7, bytes);
  EXPECT_EQ(resident_pages(p, bytes), bytes / page);
  // From the middle of page 1 to the end: page 1 keeps its bytes, the rest reads zeros.
  s->discard(page + 100, bytes);
  EXPECT_EQ(resident_pages(p, bytes), 2u);
  EXPECT_EQ(p[page + 100], 7);
  EXPECT_EQ(p[2 * page], 0);
  EXPECT_EQ(p[bytes - 1], 0);
  p[bytes - 1] = 9;  // writable again
  EXPECT_EQ(p[bytes - 1], 9);
}

TEST(IdleMemory, DiscardLeavesSmallAndBorrowedStoragesAlone) {
  auto small = Storage::allocate(4096);
  ASSERT_TRUE(small);
  std::memset(small->data(), 5, 4096);
  small->discard(0, 4096);
  EXPECT_EQ(static_cast<unsigned char*>(small->data())[100], 5);
  std::vector<unsigned char> mine(1 << 20, 3);
  auto view = Storage::view(mine.data(), mine.size(), nullptr);
  view->discard(0, mine.size());
  EXPECT_EQ(mine[mine.size() / 2], 3);
}

// y = Relu(x) over [rows, 1024] floats: y's buffer comes from the session's pool.
std::string relu_model(int64_t rows) {
  onnxpb::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  for (const char* name : {"x", "y"}) {
    auto* v = name[0] == 'x' ? g->add_input() : g->add_output();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnxpb::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(rows);
    tt->mutable_shape()->add_dim()->set_dim_value(1024);
  }
  auto* n = g->add_node();
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  return m.SerializeAsString();
}

TEST(IdleMemory, TrimmedSessionDropsIdleBuffersAndRunsTheSame) {
  const int64_t rows = 512;
  const size_t bytes = static_cast<size_t>(rows) * 1024 * sizeof(float);
  const std::string model = relu_model(rows);
  auto session = Session::create_from_memory(model.data(), model.size());
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  std::vector<float> x(static_cast<size_t>(rows) * 1024);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  const Value input(Tensor::from_vector<float>(x, {rows, 1024}));
  std::vector<Value> outputs;
  ASSERT_TRUE((*session)->run({input}, outputs).is_ok());
  const void* y = outputs[0].tensor().raw_data();
  EXPECT_GE(resident_pages(y, bytes), bytes / page_size() - 1);
  // Held by the caller: kept.
  EXPECT_EQ((*session)->trim_memory(), 0u);
  EXPECT_GE(resident_pages(y, bytes), bytes / page_size() - 1);
  // Back in the pool: its pages go, the buffer stays for the next run.
  outputs.clear();
  EXPECT_GE((*session)->trim_memory(), bytes);
  EXPECT_EQ(resident_pages(y, bytes), 0u);
  ASSERT_TRUE((*session)->run({input}, outputs).is_ok());
  EXPECT_EQ(outputs[0].tensor().raw_data(), y);
  const float* got = outputs[0].tensor().data<float>();
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i], x[i] > 0 ? x[i] : 0.0f) << i;
}

}  // namespace
}  // namespace xonnx
