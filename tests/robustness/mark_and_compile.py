#!/usr/bin/env python3
"""agc over real library headers: "agc's output compiles, or agc says no at the line".

Takes the headers of libraries Debian ships (nlohmann-json3-dev, libcli11-dev,
libfmt-dev, libspdlog-dev, libeigen3-dev), marks function definitions at
random with AG_FUNCTION, runs `agc transpile` and compiles what it wrote.
Every marked definition must end one of two ways:

  rejected  agc exits 1 with an error at a line of the file, and no crash;
  compiled  agc exits 0 and its output passes clang++-19 -fsyntax-only.

Anything else fails: agc crashing, asserting, hanging or exiting 2, an exit 1
without an error at a line, or output that does not compile. Each failure is
reported with the header, the function and the first error.

A header becomes a translation unit of its own: `#include <ag/ag.h>`, then
the header's text with its quoted includes made absolute, so that the marked
definitions are in the file agc converts (agc never rewrites an included
header). A header that cannot stand alone (Eigen's src/) is inlined where its
module header includes it. libclang finds the definitions (definitions.py);
the mark goes where users write it: before the declaration's specifiers,
after its template headers and [[attributes]].

Several definitions are marked per unit (--per-unit). A rejection or a
compile error is attributed to the definition holding its line (agc's output
maps lines back with #line); the others run again without it. An error that
names no marked definition, and a crash, split the marks in halves.

  mark_and_compile.py --agc AGC [--seed S] [--count N] [--per-unit K]
                      [--libraries json,cli11,fmt,spdlog,eigen] [--only HEADER:LINE]...
                      [--work DIR] [--keep DIR] [-- COMPILER_FLAGS...]

COMPILER_FLAGS default to -std=c++20 with this repository's include/ and
Eigen. The run is deterministic: the seed picks the headers and definitions
(given the installed versions of the libraries). The last line is
"N passed, M failed"; the exit code is 1 when anything failed.
"""
import argparse
import collections
import glob
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import definitions  # noqa: E402

TIMEOUT = 300
MARK = "AG_FUNCTION "
PRELUDE = "#include <ag/ag.h>\n"
CXX = "clang++-19"
# Debian's spdlog is a compiled library on external fmt (spdlog.pc); its
# *-inl.h files then hold the out-of-class definitions, like sources.
DEFINES = ["-DSPDLOG_SHARED_LIB", "-DSPDLOG_COMPILED_LIB", "-DSPDLOG_FMT_EXTERNAL"]


class Library:
    def __init__(self, name, root, patterns, parents=(), exclude=()):
        self.name = name
        self.root = root          # reports name headers relative to it
        self.patterns = patterns  # the headers to mark, globbed under root
        self.parents = parents    # headers that may include one that cannot stand alone
        self.exclude = exclude    # path prefixes (under root) left out, with a reason each

    def headers(self):
        found = set()
        for pattern in self.patterns:
            found.update(glob.glob(os.path.join(self.root, pattern), recursive=True))
        return sorted(h for h in found
                      if os.path.isfile(h) and not os.path.relpath(h, self.root).startswith(self.exclude))

    def parent_files(self):
        found = set()
        for pattern in self.parents:
            found.update(glob.glob(os.path.join(self.root, pattern), recursive=True))
        return sorted(f for f in found if os.path.isfile(f))


LIBRARIES = [
    Library("json", "/usr/include", ["nlohmann/**/*.hpp"]),
    Library("cli11", "/usr/include", ["CLI/*.hpp"]),
    Library("fmt", "/usr/include", ["fmt/*.h"]),
    Library("spdlog", "/usr/include", ["spdlog/**/*.h"]),
    # Eigen/Core is part of <ag/ag.h>, so its src/Core is there already; the
    # other modules' src/ headers are inlined into their module header.
    Library("eigen", "/usr/include/eigen3", ["Eigen/src/**/*.h"], parents=["Eigen/*"],
            exclude=("Eigen/src/Core/", "Eigen/src/plugins/", "Eigen/src/misc/")),
]

INCLUDE = re.compile(r'^(\s*#\s*include\s*)"([^"]+)"', re.M)
DIAGNOSTIC = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?:fatal )?error: (?P<msg>.*)$", re.M)
CRASH = re.compile(r"PLEASE submit a bug report|Stack dump:|Assertion .* failed|LLVM ERROR|terminate called")


# ---- Translation units -------------------------------------------------------

def header_text(path):
    """A header's text with its quoted includes absolute, line for line."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    directory = os.path.dirname(path)

    def absolute(m):
        target = os.path.normpath(os.path.join(directory, m.group(2)))
        return f'{m.group(1)}"{target}"' if os.path.isfile(target) else m.group(0)

    text = INCLUDE.sub(absolute, text)
    return text if text.endswith("\n") else text + "\n"


class Unit:
    """A translation unit holding one header's text, and its line map."""

    def __init__(self, library, header, parent=None):
        self.library = library
        self.header = header
        self.parent = parent
        text = header_text(header)
        if parent is None:
            before, after = PRELUDE, ""
        else:
            before, after = self._around(header_text(parent), header)
        self.first_line = before.count("\n") + 1  # the header's line 1
        self.last_line = self.first_line + text.count("\n") - 1
        self.text = before + text + after

    @staticmethod
    def _around(parent_text, header):
        """The prelude and the parent's text before and after its include of `header`."""
        for m in INCLUDE.finditer(parent_text):
            if os.path.realpath(m.group(2)) == os.path.realpath(header):
                line_end = parent_text.index("\n", m.start())
                return PRELUDE + parent_text[:m.start()], parent_text[line_end + 1:]
        raise ValueError(f"{parent_text[:40]} does not include {header}")

    def name(self):
        return os.path.relpath(self.header, self.library.root)

    def header_line(self, line):
        """The header's line of a line of the unit (None outside it)."""
        return line - self.first_line + 1 if self.first_line <= line <= self.last_line else None

    def localize(self, message):
        """A message with the unit's lines named as the header's."""
        def header_line(m):
            line = self.header_line(int(m.group(1)))
            return f"{self.name()}:{line}" if line else m.group(0)
        return re.sub(r"(?:\S*/)?unit\.cpp:(\d+)", header_line, message)

    def marked(self, marks):
        text = self.text
        for d in sorted(marks, key=lambda d: -d.mark_offset):
            text = text[:d.mark_offset] + MARK + text[d.mark_offset:]
        return text


def parents_of(library, header, cache={}):
    if library.name not in cache:
        including = collections.defaultdict(list)
        for parent in library.parent_files():
            for m in INCLUDE.finditer(header_text(parent)):
                including[os.path.realpath(m.group(2))].append(parent)
        cache[library.name] = including
    return cache[library.name].get(os.path.realpath(header), [])


def load_unit(index, library, header, work):
    """The unit of a header, standing alone or in a parent, with its
    definitions; (None, reason) when no unit parses or it has none."""
    reason = "no definition to mark"
    for parent in [None] + parents_of(library, header):
        unit = Unit(library, header, parent)
        parsed = index.parse(os.path.join(work, "unit.cpp"), unit.text)
        if parsed.errors:
            reason = f"does not compile unmarked: {parsed.errors[0]}"
            continue
        unit.definitions = [d for d in parsed.definitions
                            if unit.header_line(d.first_line) and unit.header_line(d.end_line)]
        if unit.definitions:
            return unit, None
    return None, reason


# ---- Running agc and the compiler ---------------------------------------------

class Outcome:
    def __init__(self, kind, message="", detail=""):
        self.kind = kind          # compiled, rejected, unmarkable, crash, hang, unclear, compile
        self.message = message    # the first error
        self.detail = detail      # the whole output, for --keep

    @property
    def failed(self):
        return self.kind not in ("compiled", "rejected", "unmarkable")


class Runner:
    def __init__(self, agc, flags, pch, work):
        self.agc = agc
        self.flags = flags
        self.pch = pch
        self.work = work
        self.runs = 0

    def transpile(self, text):
        source = os.path.join(self.work, "unit.cpp")
        out = os.path.join(self.work, "out")
        shutil.rmtree(out, ignore_errors=True)
        with open(source, "w") as f:
            f.write(text)
        self.runs += 1
        try:
            done = subprocess.run([self.agc, "transpile", "unit.cpp", "-o", "out", "--"] + self.flags,
                                  cwd=self.work, capture_output=True, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return None, "", os.path.join(out, "unit.ag.cpp")
        return done.returncode, done.stderr, os.path.join(out, "unit.ag.cpp")

    def compile(self, path):
        done = subprocess.run([CXX, "-fsyntax-only", "-include-pch", self.pch] + self.flags + [path],
                              cwd=self.work, capture_output=True, text=True, timeout=TIMEOUT)
        return done.returncode, done.stderr


def error_blocks(output):
    """[(message, [unit.cpp lines it names])] per error, its notes included."""
    blocks = []
    for chunk in re.split(r"(?m)^(?=[^\s:][^:\n]*:\d+:\d+: (?:fatal )?error: )", output):
        m = DIAGNOSTIC.search(chunk)
        if not m:
            continue
        lines = [int(n) for n in re.findall(r"(?m)^unit(?:\.ag)?\.cpp:(\d+):\d+: ", chunk)]
        blocks.append((f"{os.path.basename(m.group('file'))}:{m.group('line')}: {m.group('msg')}",
                       lines, chunk))
    return blocks


def attribute(blocks, marks, first_only=False):
    """{mark: its first error} for the marks whose lines an error names."""
    found = {}
    for message, lines, _ in blocks[:1] if first_only else blocks:
        for mark in marks:
            if mark not in found and any(mark.first_line <= n <= mark.end_line for n in lines):
                found[mark] = message
    return found


def settle(unit, marks, runner):
    """{definition: Outcome} for marks agc sees together."""
    results, pending = {}, list(marks)
    while pending:
        code, stderr, output = runner.transpile(unit.marked(pending))
        trouble = agc_trouble(code, stderr)
        if trouble:
            return {**results, **split(unit, pending, runner, trouble)}
        if code == 1:
            blocks = error_blocks(stderr)
            rejected = attribute(blocks, pending)
            if not rejected:
                return {**results, **split(unit, pending, runner, Outcome("unclear", first(stderr), stderr))}
            for mark, message in rejected.items():
                results[mark] = Outcome("rejected", message)
                pending.remove(mark)
            continue
        status, errors = runner.compile(output)
        if status == 0:
            results.update({mark: Outcome("compiled") for mark in pending})
            return results
        failed = attribute(error_blocks(errors), pending, first_only=True)
        if not failed:
            return {**results, **split(unit, pending, runner, Outcome("compile", first(errors), errors))}
        for mark, message in failed.items():
            results[mark] = Outcome("compile", message, errors)
            pending.remove(mark)
    return results


def agc_trouble(code, stderr):
    """The Outcome of an agc run that neither succeeded nor rejected clearly."""
    if code is None:
        return Outcome("hang", f"agc ran longer than {TIMEOUT} s")
    crash = CRASH.search(stderr)
    if code < 0 or code > 2 or crash:
        return Outcome("crash", crash_line(stderr, code), stderr)
    if code == 2:
        return Outcome("unclear", f"agc exited 2 (tool failure): {first(stderr)}", stderr)
    if code == 1 and not DIAGNOSTIC.search(stderr):
        return Outcome("unclear", f"agc exited 1 without an error at a line: {first(stderr)}", stderr)
    return None


def split(unit, marks, runner, outcome):
    """Settles halves of `marks`; a single mark takes `outcome`."""
    if len(marks) == 1:
        return {marks[0]: outcome}
    half = len(marks) // 2
    return {**settle(unit, marks[:half], runner), **settle(unit, marks[half:], runner)}


def first(output):
    m = DIAGNOSTIC.search(output)
    if m:
        return f"{os.path.basename(m.group('file'))}:{m.group('line')}: {m.group('msg')}"
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[0] if lines else "(no output)"


def crash_line(stderr, code):
    for line in stderr.splitlines():
        if re.search(r"Assertion|LLVM ERROR|terminate called|what\(\)", line):
            return line.strip()
    return f"agc exited {code}" + (f" (signal {-code})" if code < 0 else "")


def unmarkable(unit, marks, index, work):
    """{mark: error} for the marks that make the unit fail to compile as plain
    C++ (a place the heuristic got wrong); agc never sees them. An error
    outside the marked definitions (in a macro they use) splits the marks."""
    parsed = index.parse(os.path.join(work, "unit.cpp"), unit.marked(marks))
    if not parsed.errors:
        return {}
    blocks = [(e, [int(n) for n in re.findall(r"unit\.cpp:(\d+):", e)], e) for e in parsed.errors]
    found = attribute(blocks, marks)
    if found or len(marks) == 1:
        return found or {marks[0]: parsed.errors[0]}
    half = len(marks) // 2
    return {**unmarkable(unit, marks[:half], index, work), **unmarkable(unit, marks[half:], index, work)}


# ---- The run ----------------------------------------------------------------

def plan(args, libraries):
    """[[(library, header, lines or None)]]: one queue of headers per library,
    each in a seeded order (or the --only ones)."""
    if args.only:
        return [[(lib, header, sorted(lines))]
                for (lib, header), lines in only_targets(args.only, libraries).items()]
    rng = random.Random(args.seed)
    queues = []
    for library in libraries:
        headers = library.headers()
        if not headers:
            sys.exit(f"no headers of {library.name} under {library.root}: run tools/bootstrap.sh")
        rng.shuffle(headers)
        queues.append([(library, h, None) for h in headers])
    return queues


def units(queues, index, work):
    """(unit, lines) round robin over the queues: each turn, a library's next
    header that makes a unit (the others are reported skipped)."""
    while any(queues):
        for queue in queues:
            while queue:
                library, header, lines = queue.pop(0)
                unit, reason = load_unit(index, library, header, work)
                if unit:
                    yield unit, lines
                    break
                print(f"skipped    {library.name:<6} {os.path.relpath(header, library.root)}: {reason}",
                      flush=True)


def only_targets(only, libraries):
    targets = collections.defaultdict(set)
    for item in only:
        path, _, line = item.rpartition(":")
        for library in libraries:
            header = os.path.join(library.root, path)
            if os.path.isfile(header) and path.startswith(tuple(p.split("*")[0] for p in library.patterns)):
                targets[(library, header)].add(int(line))
                break
        else:
            sys.exit(f"--only {item}: no header {path} in the libraries")
    return targets


def choose(unit, lines, rng, count):
    if lines is not None:
        return [d for d in unit.definitions if unit.header_line(d.name_line) in lines]
    return rng.sample(unit.definitions, min(count, len(unit.definitions)))


def report(unit, mark, outcome):
    line = unit.header_line(mark.name_line)
    where = f"{unit.name()}:{line}"
    text = f"{outcome.kind:<10} {unit.library.name:<6} {where}  {mark.kind} {mark.name}"
    if outcome.failed:
        text = f"FAIL {outcome.kind:<5} {unit.library.name:<6} {where}  {mark.kind} {mark.name}"
    if outcome.message:
        text += f"\n    {outcome.message}"
    if outcome.failed:
        text += f"\n    repeat: {os.path.relpath(__file__)} --agc ... --only {where}"
    print(text, flush=True)


def keep(directory, unit, mark, outcome):
    os.makedirs(directory, exist_ok=True)
    stem = re.sub(r"[^\w]+", "_", f"{unit.name()}_{unit.header_line(mark.name_line)}")
    with open(os.path.join(directory, stem + ".cpp"), "w") as f:
        f.write(unit.marked([mark]))
    with open(os.path.join(directory, stem + ".txt"), "w") as f:
        f.write(f"{outcome.kind}: {outcome.message}\n\n{outcome.detail}")


def build_pch(flags, work):
    prelude = os.path.join(work, "prelude.h")
    with open(prelude, "w") as f:
        f.write(PRELUDE)
    pch = os.path.join(work, "prelude.pch")
    subprocess.run([CXX, "-x", "c++-header", prelude, "-o", pch] + flags, check=True)
    return pch


def main():
    args = parse_args()
    libraries = [lib for lib in LIBRARIES if lib.name in args.libraries.split(",")]
    flags = (args.flags or ["-std=c++20", f"-I{REPO}/include", "-isystem", "/usr/include/eigen3"]) + DEFINES
    # Absolute: agc and the compiler run inside it, on paths under it.
    work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="ag-robustness-"))
    os.makedirs(work, exist_ok=True)
    pch = build_pch(flags, work)
    index = definitions.Index(["-x", "c++", "-include-pch", pch] + flags)
    runner = Runner(os.path.abspath(args.agc), flags, pch, work)
    rng = random.Random(args.seed)
    tally = collections.defaultdict(collections.Counter)
    failures = []
    done = 0
    for unit, lines in units(plan(args, libraries), index, work):
        if not args.only and done >= args.count:
            break
        marks = choose(unit, lines, rng, min(args.per_unit, args.count - done))
        if not marks:
            sys.exit(f"--only: no definition whose name is on line {lines} of {unit.name()}")
        bad = unmarkable(unit, marks, index, work)
        results = {mark: Outcome("unmarkable", message) for mark, message in bad.items()}
        if len(bad) < len(marks):
            results.update(settle(unit, [m for m in marks if m not in bad], runner))
        for mark in marks:
            outcome = results[mark]
            outcome.message = unit.localize(outcome.message)
            report(unit, mark, outcome)
            tally[unit.library.name][outcome.kind] += 1
            if outcome.failed:
                failures.append((unit, mark, outcome))
                if args.keep:
                    keep(args.keep, unit, mark, outcome)
        done += len(marks) - len(bad)
    summarize(tally, failures, runner)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


def summarize(tally, failures, runner):
    print(f"\n{'library':<8} {'compiled':>8} {'rejected':>8} {'failed':>6} {'unmarkable':>10}")
    for name, counts in tally.items():
        failed = sum(n for kind, n in counts.items() if kind not in ("compiled", "rejected", "unmarkable"))
        print(f"{name:<8} {counts['compiled']:>8} {counts['rejected']:>8} {failed:>6} {counts['unmarkable']:>10}")
    families = collections.Counter(f"{o.kind}: {normalise(o.message)}" for _, _, o in failures)
    if families:
        print("\nfailure families:")
        for family, n in families.most_common():
            print(f"  {n:>3}  {family}")
    passed = sum(c["compiled"] + c["rejected"] for c in tally.values())
    print(f"\nagc ran {runner.runs} times")
    print(f"{passed} passed, {len(failures)} failed")


def normalise(message):
    m = re.sub(r"^\S+:\d+: ", "", message)
    m = re.sub(r"'[^']*'", "'X'", m)
    return re.sub(r"\d+", "N", m)[:140]


def parse_args():
    argv = sys.argv[1:]
    flags = None
    if "--" in argv:
        flags = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agc", required=True, help="the agc executable")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=30, help="definitions to mark in all")
    parser.add_argument("--per-unit", type=int, default=6, help="definitions marked per header")
    parser.add_argument("--libraries", default=",".join(lib.name for lib in LIBRARIES))
    parser.add_argument("--only", action="append", default=[], metavar="HEADER:LINE",
                        help="mark this definition only (the line of its name), as a failure names it")
    parser.add_argument("--work", help="a folder for the units (default: a temporary one, removed)")
    parser.add_argument("--keep", metavar="DIR", help="write each failing unit, marked once, and its error")
    args = parser.parse_args(argv)
    args.flags = flags
    return args


if __name__ == "__main__":
    sys.exit(main())
