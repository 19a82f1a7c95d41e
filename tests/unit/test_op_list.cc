// The op list (runtime/ops/ops.def) is the single source of what an op is: every kernel the
// registry holds belongs to a listed op, every listed op has its reference kernel covering
// exactly the listed versions, arity errors come from the list, and its traits answer the
// layout pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "op_test_util.h"
#include "runtime/ops/op_families.h"
#include "runtime/ops/op_list.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using testing::run_op;
using testing::tv;

TEST(OpList, EveryKernelIsOfAListedOp) {
  const OpRegistry& r = OpRegistry::global();
  for (const std::string& left_out : r.unlisted_ops()) ADD_FAILURE() << "kernel of an unlisted op: " << left_out;
  for (const OpDef* d : r.all()) {
    const OpSpec* s = find_op_spec(d->domain, d->name, d->backend == Backend::kReference ? d->min_version : -1);
    ASSERT_NE(s, nullptr) << d->domain << "::" << d->name;
    if (d->backend == Backend::kReference) {
      EXPECT_EQ(s->min_version, d->min_version) << d->name;
      EXPECT_EQ(s->max_version, d->max_version) << d->name;
    }
  }
}

TEST(OpList, EveryListedOpHasItsReferenceKernelInItsFamily) {
  std::set<std::pair<std::string, std::string>> reference;
  for (const OpDef* d : OpRegistry::global().all()) {
    if (d->backend == Backend::kReference) reference.insert({d->domain, d->name});
  }
  size_t n = 0;
  const OpSpec* list = op_list(&n);
  ASSERT_GT(n, 200u);
  for (size_t i = 0; i < n; ++i) {
    const OpSpec& s = list[i];
    EXPECT_TRUE(reference.count({s.domain, s.name})) << s.domain << "::" << s.name << " has no reference kernel";
    EXPECT_LE(s.min_version, s.max_version) << s.name;
    EXPECT_TRUE(s.max_inputs < 0 || s.min_inputs <= s.max_inputs) << s.name;
    EXPECT_TRUE(s.max_outputs < 0 || s.min_outputs <= s.max_outputs) << s.name;
    const std::vector<std::string> families = families_of_op(s.domain, s.name);
    ASSERT_FALSE(families.empty()) << s.name;
    EXPECT_NE(std::find(families.begin(), families.end(), s.family), families.end())
        << s.domain << "::" << s.name << " is not registered by its family " << s.family;
  }
}

TEST(OpList, ArityErrorsNameNodeOpAndCounts) {
  auto too_many = run_op("Relu", {tv<float>({1, 2}, {2}), tv<float>({1, 2}, {2})});
  ASSERT_FALSE(too_many.is_ok());
  EXPECT_EQ(too_many.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(too_many.status().message().find("'n0'"), std::string::npos) << too_many.status().message();
  EXPECT_NE(too_many.status().message().find("has 2 inputs; Relu takes 1"), std::string::npos)
      << too_many.status().message();
  auto outputs = run_op("Gemm", {tv<float>({1}, {1, 1}), tv<float>({1}, {1, 1})}, {}, 17, 2);
  ASSERT_FALSE(outputs.is_ok());
  EXPECT_NE(outputs.status().message().find("has 2 outputs; Gemm gives 1"), std::string::npos)
      << outputs.status().message();
  auto clip = run_op("Clip", {tv<float>({1}, {1}), tv<float>({0}, {}), tv<float>({1}, {}), tv<float>({2}, {})});
  ASSERT_FALSE(clip.is_ok());
  EXPECT_NE(clip.status().message().find("Clip takes 1 to 3"), std::string::npos) << clip.status().message();
}

TEST(OpList, TraitsAnswerTheLayoutPass) {
  EXPECT_TRUE(op_has_trait("", "Relu", kLayoutAgnostic));
  EXPECT_TRUE(op_has_trait("", "Identity", kLayoutAgnostic));
  EXPECT_FALSE(op_has_trait("", "Softmax", kLayoutAgnostic));  // reads along an axis
  EXPECT_TRUE(op_has_trait("com.microsoft", "Gelu", kLayoutAgnostic));
  EXPECT_FALSE(op_has_trait("com.microsoft", "FastGelu", kLayoutAgnostic));  // its bias reads along the last axis
  EXPECT_FALSE(op_has_trait("", "NoSuchOp", kLayoutAgnostic));
}

TEST(OpList, FindsTheEntryByVersion) {
  const OpSpec* s = find_op_spec("", "Erf", 13);
  ASSERT_NE(s, nullptr);
  EXPECT_STREQ(s->family, "unary");
  EXPECT_EQ(find_op_spec("", "Erf", 8), nullptr);  // Erf starts at 9
  EXPECT_EQ(describe_arity(1, 1), "1");
  EXPECT_EQ(describe_arity(1, 3), "1 to 3");
  EXPECT_EQ(describe_arity(3, -1), "3 or more");
}

}  // namespace
}  // namespace xonnx
