#include "rewrite/SourceText.h"

#include <algorithm>

namespace agc {

Text& Text::add(std::string generated) {
  if (!generated.empty()) segments_.push_back({std::move(generated), std::string::npos});
  return *this;
}

Text& Text::addCopy(std::string_view text, std::size_t origin) {
  if (!text.empty()) segments_.push_back({std::string(text), origin});
  return *this;
}

Text& Text::add(const Text& other) {
  segments_.insert(segments_.end(), other.segments_.begin(), other.segments_.end());
  return *this;
}

std::string Text::str() const {
  std::string result;
  for (const Segment& segment : segments_) result += segment.text;
  return result;
}

Text operator+(Text lhs, const Text& rhs) {
  return lhs.add(rhs);
}

SourceText::SourceText(std::string_view buffer, std::string fileName)
    : buffer_(buffer), fileName_(std::move(fileName)) {
  lineStarts_.push_back(0);
  for (std::size_t i = 0; i < buffer_.size(); ++i)
    if (buffer_[i] == '\n') lineStarts_.push_back(i + 1);
}

Text SourceText::copy(std::size_t begin, std::size_t end) const {
  Text result;
  std::size_t position = begin;
  for (auto it = edits_.lower_bound(begin); it != edits_.end() && it->first < end; ++it) {
    result.addCopy(buffer_.substr(position, it->first - position), position);
    result.add(it->second.replacement);
    position = it->second.end;
  }
  if (position < end) result.addCopy(buffer_.substr(position, end - position), position);
  return result;
}

void SourceText::replace(std::size_t begin, std::size_t end, Text replacement) {
  edits_.erase(edits_.lower_bound(begin), edits_.lower_bound(end));
  edits_[begin] = Edit{end, std::move(replacement)};
}

unsigned SourceText::lineOf(std::size_t offset) const {
  auto next = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), offset);
  return static_cast<unsigned>(next - lineStarts_.begin());
}

unsigned SourceText::columnOf(std::size_t offset) const {
  return static_cast<unsigned>(offset - lineStarts_[lineOf(offset) - 1] + 1);
}

std::string SourceText::render(bool lineDirectives) const {
  Text whole = copy(0, buffer_.size());
  return lineDirectives ? renderWithLineDirectives(whole, *this) : whole.str();
}

namespace {

std::string quoted(const std::string& fileName) {
  std::string result = "\"";
  for (char c : fileName) {
    if (c == '"' || c == '\\') result += '\\';
    result += c;
  }
  return result + "\"";
}

}  // namespace

std::string renderWithLineDirectives(const Text& text, const SourceText& source) {
  const std::vector<Segment>& segments = text.segments();
  auto isSpace = [](const std::string& s) {
    return s.find_first_not_of(" \t\r\n") == std::string::npos;
  };
  // The user's line of the next copied code from segment `i`, if only
  // generated text without line breaks comes before it; 0 otherwise.
  auto nextCopiedLineOnSameLine = [&](std::size_t i) -> unsigned {
    for (; i < segments.size(); ++i) {
      const Segment& segment = segments[i];
      if (segment.origin != std::string::npos && !isSpace(segment.text))
        return source.lineOf(segment.origin);
      if (segment.text.find('\n') != std::string::npos) return 0;
    }
    return 0;
  };
  std::string out;
  unsigned presumedLine = 1;  // the line the compiler believes `out`'s last line has
  auto directive = [&](unsigned line) {
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += "#line " + std::to_string(line) + " " + quoted(source.fileName()) + "\n";
    presumedLine = line;
  };
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const Segment& segment = segments[i];
    bool atLineStart = out.empty() || out.back() == '\n';
    if (segment.origin == std::string::npos) {
      // Generated text that starts a line shares the line of the user code after it.
      unsigned line = atLineStart ? nextCopiedLineOnSameLine(i) : 0;
      if (line != 0 && line != presumedLine) directive(line);
    } else if (!isSpace(segment.text)) {
      // Leading blank lines go out first, so the directive lands on the code.
      std::size_t code = segment.text.find_first_not_of(" \t\r\n");
      std::size_t lineBreak = segment.text.rfind('\n', code);
      std::size_t skip = lineBreak == std::string::npos ? 0 : lineBreak + 1;
      out.append(segment.text, 0, skip);
      presumedLine += static_cast<unsigned>(
          std::count(segment.text.begin(), segment.text.begin() + skip, '\n'));
      unsigned line = source.lineOf(segment.origin + skip);
      if (line != presumedLine) {
        directive(line);
        // Keep the user's column too, so carets point at the right place.
        out.append(source.columnOf(segment.origin + skip) - 1, ' ');
      }
      out.append(segment.text, skip);
      presumedLine +=
          static_cast<unsigned>(std::count(segment.text.begin() + skip, segment.text.end(), '\n'));
      continue;
    }
    out += segment.text;
    presumedLine +=
        static_cast<unsigned>(std::count(segment.text.begin(), segment.text.end(), '\n'));
  }
  return out;
}

}  // namespace agc
