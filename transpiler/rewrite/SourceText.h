// Text assembled from pieces of the original file and generated code.
//
// Every converter produces a `Text`: a list of segments, each either copied
// from the main file (remembering its offset) or generated. Keeping the origin
// lets the renderer emit `#line` directives only where generated code shifted
// the user's lines, so compiler errors point at the user's own lines and an
// untouched file comes out byte-identical.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace agc {

// One piece of output text.
struct Segment {
  std::string text;
  // Offset in the main file of text[0], or npos for generated text.
  std::size_t origin = std::string::npos;
};

class Text {
 public:
  Text() = default;
  Text(std::string generated) { add(std::move(generated)); }  // NOLINT: implicit on purpose
  Text(const char* generated) : Text(std::string(generated)) {}

  Text& add(std::string generated);
  Text& addCopy(std::string_view text, std::size_t origin);
  Text& add(const Text& other);
  Text& operator+=(const Text& other) { return add(other); }
  Text& operator+=(std::string generated) { return add(std::move(generated)); }
  Text& operator+=(const char* generated) { return add(std::string(generated)); }

  const std::vector<Segment>& segments() const { return segments_; }
  // The plain text, without any line mapping.
  std::string str() const;

 private:
  std::vector<Segment> segments_;
};

Text operator+(Text lhs, const Text& rhs);

// The main file's bytes, with replacement edits applied on copy.
//
// Edits are kept non-overlapping: registering an edit that encloses earlier
// ones replaces them (its text was built by copying through them).
class SourceText {
 public:
  SourceText(std::string_view buffer, std::string fileName);

  std::string_view buffer() const { return buffer_; }
  const std::string& fileName() const { return fileName_; }

  // Bytes [begin, end) with the edits inside that range applied.
  Text copy(std::size_t begin, std::size_t end) const;
  // Replaces [begin, end) by `replacement`; drops edits nested inside.
  void replace(std::size_t begin, std::size_t end, Text replacement);

  // 1-based line and column of an offset.
  unsigned lineOf(std::size_t offset) const;
  unsigned columnOf(std::size_t offset) const;

  // The whole file with all edits applied. With `lineDirectives`, `#line`
  // directives are added wherever output lines drift from the user's lines.
  std::string render(bool lineDirectives) const;

 private:
  struct Edit {
    std::size_t end;
    Text replacement;
  };
  std::string_view buffer_;
  std::string fileName_;
  std::vector<std::size_t> lineStarts_;
  std::map<std::size_t, Edit> edits_;  // keyed by begin offset
};

// Renders text, adding `#line` directives for `fileName` where needed.
std::string renderWithLineDirectives(const Text& text, const SourceText& source);

}  // namespace agc
