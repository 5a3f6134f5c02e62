#!/usr/bin/env python3
"""Doxygen's input filter for the public headers (docs/Doxyfile.in).

The headers under include/ag/ document their API in plain `//` comments
placed before each declaration. Doxygen reads only `///` and `/** */` as
documentation, so this filter, run on each header before Doxygen parses it:

- turns each comment line that starts a line (`// ...`) into `/// ...`;
- keeps a paragraph (comment lines between blank `//` lines) that has an
  indented line (`//   code`) or a table rule (`// ----  ----`) as it is
  laid out: a Markdown code block, four more spaces in;
- leaves section rules such as `// ---- Reductions ----` plain comments, so
  that they do not become the description of the next declaration;
- marks the file's leading comment block with `@file`, so that it documents
  the header rather than its first declaration;
- escapes, in the other paragraphs and outside `code spans`, the characters
  Doxygen would read as commands, HTML or entities (\\ @ < > & # % $).

It writes the header to stdout with the same lines, so Doxygen's line
numbers stay those of the file. Standard library only.

    usage: doxygen_filter.py HEADER
"""
import re
import sys

COMMENT = re.compile(r"^(\s*)//(?![/!])(.*)$")
SECTION_RULE = re.compile(r"^\s*-{3,}\s*[^-\s].*-{3,}\s*$")  # ---- Title ----
TABLE_RULE = re.compile(r"^\s*-{3,}(\s+-{3,})*\s*$")  # ------  ------
INDENTED = re.compile(r"^ {3,}\S")
SPECIAL = re.compile(r"([\\@<>&#%$])")


def escape(text):
    """Escapes Doxygen's special characters outside `code spans`."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = SPECIAL.sub(r"\\\1", parts[i])
    return "`".join(parts)


def paragraphs(block):
    """Splits a block's comment texts into runs of non-blank lines: (start, end)."""
    runs, start = [], None
    for i, text in enumerate(block + [""]):
        if text.strip() and start is None:
            start = i
        elif not text.strip() and start is not None:
            runs.append((start, i))
            start = None
    return runs


def convert_block(indents, texts, leading):
    """The /// lines of one block of consecutive comment lines."""
    out = [None] * len(texts)
    last_prose = None
    for start, end in paragraphs(texts):
        run = texts[start:end]
        preformatted = any(INDENTED.match(t) or TABLE_RULE.match(t) for t in run)
        for i in range(start, end):
            out[i] = "    " + texts[i] if preformatted else escape(texts[i])
        if not preformatted:
            last_prose = end - 1
    for i, text in enumerate(texts):
        if out[i] is None:  # a blank comment line
            out[i] = text
    if leading and last_prose is not None:
        out[last_prose] += " @file"
    return [indent + "///" + text for indent, text in zip(indents, out)]


def convert(lines):
    out = []
    block_indents, block_texts = [], []
    leading = True  # no block and no code yet: the file's leading comment

    def flush():
        nonlocal leading
        if block_texts:
            out.extend(convert_block(block_indents, block_texts, leading))
            leading = False
            block_indents.clear()
            block_texts.clear()

    for line in lines:
        match = COMMENT.match(line)
        if match and not SECTION_RULE.match(match.group(2)):
            block_indents.append(match.group(1))
            block_texts.append(match.group(2))
            continue
        flush()
        out.append(line)
        if line.strip():
            leading = False
    flush()
    return out


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        lines = f.read().split("\n")
    sys.stdout.write("\n".join(convert(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
