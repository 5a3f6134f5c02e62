// Unit tests for the trace-type rule (analysis/TraceTypes.h), which mirrors
// visit_trace_type in include/ag/trace_type.h: accepted and rejected types.
#include "analysis/TraceTypes.h"

#include "parsed_code.h"

#include <gtest/gtest.h>

namespace agc {
namespace {

using test::ParsedCode;

constexpr const char* kTypes = R"(
namespace ag { struct Module {}; struct TensorSpec {}; }
namespace std {
template <class C> struct basic_string {};
using string = basic_string<char>;
template <class T> struct vector {};
template <class T, unsigned long N> struct array {};
template <class... T> struct tuple {};
template <class A, class B> struct pair {};
template <class K, class V> struct map {};
}
enum class Mode { Train, Eval };
struct Net : ag::Module {};
struct Plain {};
namespace user {
struct Keyed { int mode; };
int ag_trace_type(const Keyed& k);
struct Friendly { friend int ag_trace_type(const Friendly&) { return 0; } };
}
namespace other { struct Fields { ag::Tensor a; }; }
template <class T> void generic(T t) {}
void f(ag::Tensor t, const ag::Tensor& ref, ag::Variable v, ag::TensorSpec spec, int n,
       double d, bool b, Mode m, const char* chars, const std::string& s, Net* net, Net& netRef,
       const ag::Module& module, std::vector<ag::Tensor> tensors, std::array<int, 3> ints,
       std::tuple<ag::Tensor, int> tuple, std::pair<double, Mode> pair,
       std::map<std::string, ag::Tensor> named, user::Keyed keyed, user::Friendly friendly,
       Plain plain, Plain* plainPointer, int* intPointer, std::vector<Plain> plains,
       std::map<int, Plain> plainMap, other::Fields fields, ag::TensorArray array) {}
)";

TEST(TraceTypesTest, AcceptsWhatTraceTypeHAccepts) {
  ParsedCode code(kTypes);
  for (const char* name : {"t",    "ref",   "v",    "spec",  "n",      "d",       "b",
                           "m",    "chars", "s",    "net",   "netRef", "module",  "tensors",
                           "ints", "tuple", "pair", "named", "keyed",  "friendly"})
    EXPECT_TRUE(hasTraceType(code.var("f", name)->getType())) << name;
}

TEST(TraceTypesTest, RejectsTypesWithoutATraceType) {
  ParsedCode code(kTypes);
  for (const char* name :
       {"plain", "plainPointer", "intPointer", "plains", "plainMap", "fields", "array"})
    EXPECT_FALSE(hasTraceType(code.var("f", name)->getType())) << name;
}

TEST(TraceTypesTest, DependentTypesAreLeftToTheCompiler) {
  ParsedCode code(kTypes);
  EXPECT_TRUE(hasTraceType(code.var("generic", "t")->getType()));
}

}  // namespace
}  // namespace agc
