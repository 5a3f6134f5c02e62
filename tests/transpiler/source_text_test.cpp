// Unit tests for the text model: edits and #line rendering.
#include "rewrite/SourceText.h"

#include <gtest/gtest.h>

namespace agc {
namespace {

constexpr const char* kSource =
    "int a;\n"       // line 1
    "int f() {\n"    // line 2
    "  return 1;\n"  // line 3
    "}\n"            // line 4
    "int b;\n";      // line 5

TEST(SourceTextTest, NoEditsIsByteIdentical) {
  SourceText source(kSource, "in.cpp");
  EXPECT_EQ(source.render(/*lineDirectives=*/true), kSource);
}

TEST(SourceTextTest, SameLineCountNeedsNoDirective) {
  SourceText source(kSource, "in.cpp");
  std::size_t at = std::string_view(kSource).find("return 1;");
  source.replace(at, at + 9, Text("return 2;"));
  EXPECT_EQ(source.render(true), "int a;\nint f() {\n  return 2;\n}\nint b;\n");
}

TEST(SourceTextTest, ExtraLinesResyncWithLineDirective) {
  SourceText source(kSource, "in.cpp");
  std::size_t at = std::string_view(kSource).find("return 1;");
  source.replace(at, at + 9, Text("int x = 1;\n  int y = 2;\n  return x + y;"));
  EXPECT_EQ(source.render(true),
            "int a;\nint f() {\n  int x = 1;\n  int y = 2;\n  return x + y;\n#line 4 "
            "\"in.cpp\"\n}\nint b;\n");
  EXPECT_EQ(source.render(false),
            "int a;\nint f() {\n  int x = 1;\n  int y = 2;\n  return x + y;\n}\nint b;\n");
}

TEST(SourceTextTest, OuterEditCopiesInnerEdit) {
  SourceText source(kSource, "in.cpp");
  std::size_t one = std::string_view(kSource).find('1');
  source.replace(one, one + 1, Text("42"));
  std::size_t body = std::string_view(kSource).find('{');
  Text outer = "{ /*wrapped*/";
  outer += source.copy(body + 1, body + 15);
  source.replace(body, body + 15, outer);
  EXPECT_EQ(source.render(false), "int a;\nint f() { /*wrapped*/\n  return 42;\n}\nint b;\n");
}

TEST(SourceTextTest, LineAndColumn) {
  SourceText source(kSource, "in.cpp");
  std::size_t at = std::string_view(kSource).find("return");
  EXPECT_EQ(source.lineOf(at), 3u);
  EXPECT_EQ(source.columnOf(at), 3u);
}

TEST(SourceTextTest, FileNameIsQuoted) {
  SourceText source("a\nb\n", "dir\\x\".cpp");
  source.replace(0, 1, Text("x\ny"));
  EXPECT_EQ(source.render(true), "x\ny\n#line 2 \"dir\\\\x\\\".cpp\"\nb\n");
}

}  // namespace
}  // namespace agc
