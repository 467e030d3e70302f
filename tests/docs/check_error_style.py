#!/usr/bin/env python3
"""Checks that the library's error messages keep one style.

Usage: check_error_style.py ROOT

Every baton::Error (and subclass) message thrown by lib/baton starts with

    baton::<area>: <what> (<details>)

where <area> is a namespace-qualified function or class name (baton::recv_view,
baton::systems::read_xyz_file, baton::RankLayout, baton::pipeline::Driver).

The script scans lib/baton/**/*.hpp and *.cpp for calls `Error(` and `CollectiveError(` whose
first argument starts with a string literal (optionally wrapped in std::string(...)) and fails
unless the literal matches

    ^baton::[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*:<space>

or is one of the few prefixes built by concatenation listed in ALLOWED_BUILT_PREFIXES below, each
of which is followed by a name and ": " in the code (checked here too). Messages built entirely
from variables (Error(text), Error(std::string(operation) + ...)) are not checked by this script:
their callers pass "baton::..." names, and the unit and MPI tests check their texts.

It also fails if any prefix of the old styles is left anywhere in lib/ (OLD_PREFIXES).

Exit status: 0 when everything conforms, 1 otherwise (each offence listed as file:line: text).
"""

import pathlib
import re
import sys

STYLE = re.compile(r"^baton::[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*: ")

# Prefixes completed by concatenation: the literal, then a name (a variable), then ": ".
# The regular expression after each must match the code that follows the literal.
ALLOWED_BUILT_PREFIXES = {
    # std::string("baton::dynamics::") + who + ": slots [" ...   (checks.cpp, check_slots)
    "baton::dynamics::": re.compile(r'^\)\s*\+\s*who\s*\+\s*": '),
    # std::string("baton::RankLayout::") + query + ": rank " ...   (layout.cpp)
    "baton::RankLayout::": re.compile(r'^\)\s*\+\s*query\s*\+\s*": '),
    # std::string("baton::Communicator::") + operation + ": ..."   (communicator.cpp)
    "baton::Communicator::": re.compile(r'^\)\s*\+\s*operation\s*\+\s*": '),
    # std::string("baton::Group::") + operation + ": the group is empty"   (group.cpp)
    "baton::Group::": re.compile(r'^\)\s*\+\s*operation\s*\+\s*": '),
    # std::string("baton::BroadcastQueue::") + operation + ": rank " ...   (broadcast_queue.cpp)
    "baton::BroadcastQueue::": re.compile(r'^\)\s*\+\s*operation\s*\+\s*": '),
}

# Old message prefixes that must not come back as the start of a string literal, in code or in
# comments. The one exception: a std::fprintf format on the same line may start "baton: " (the
# stderr lines of abort_on_mpi_error and ~SendHandle, which are not exception messages). The names
# BATON_GPU_AWARE and BATON_GPU_AWARE_MPI on their own are the variables' names, not messages.
OLD_PREFIXES = [
    '"baton: ',
    '"read_xyz_file:',
    '"write_xyz_file',
    '"ClusterSpec:',
    '"timing records:',
    '"unknown MPI thread level',
    '"BATON_GPU_AWARE must',
    '"BATON_GPU_AWARE_MPI must',
]
FPRINTF_FORMAT = re.compile(r'std::fprintf\(\s*stderr\s*,\s*"baton: ')

# Folders whose code is in a namespace of the folder's name: their messages name that namespace
# (an error from the systems codec says baton::systems, not baton::pipeline).
NAMESPACED = ("systems", "dynamics", "pipeline")
AREA = re.compile(r"^baton::([a-z_]+)[:]")

# A call of Error( or CollectiveError( (not SomethingError(, not a declaration's "Error(const").
CALL = re.compile(r"(?<![A-Za-z0-9_])(?:Error|CollectiveError)\(")
# The first argument starts with a string literal, maybe inside std::string( ... ).
LITERAL = re.compile(r'\s*(?:std::string\(\s*)?"((?:[^"\\\n]|\\.)*)"')


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def strip_comments(text):
    """Blanks // and /* */ comments, keeping offsets, so commented examples are not calls."""
    out = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def check_calls(path, rel, problems):
    folder = rel.parts[2] if len(rel.parts) > 3 else ""
    code = strip_comments(path.read_text(encoding="utf-8"))
    for call in CALL.finditer(code):
        literal = LITERAL.match(code, call.end())
        if not literal:
            continue  # built from variables: not checked here
        text = literal.group(1)
        area = AREA.match(text)
        if area and folder in NAMESPACED and area.group(1) in NAMESPACED and area.group(1) != folder:
            problems.append(f"{rel}:{line_of(code, call.start())}: Error(\"{text}\" ...) names "
                            f"baton::{area.group(1)}, but the code is in baton::{folder}")
            continue
        if STYLE.match(text):
            continue
        rest = code[literal.end() :]
        allowed = ALLOWED_BUILT_PREFIXES.get(text)
        if allowed is not None and allowed.match(rest):
            continue
        problems.append(f"{rel}:{line_of(code, call.start())}: Error(\"{text}\" ...)")


def check_old_prefixes(lib, root, problems):
    for path in sorted(lib.rglob("*")):
        if not path.is_file() or path.suffix not in (".hpp", ".cpp", ".in", ".h"):
            continue
        rel = path.relative_to(root)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for old in OLD_PREFIXES:
                if old == '"baton: ' and line.count(old) == len(FPRINTF_FORMAT.findall(line)):
                    continue
                if old in line:
                    problems.append(f"{rel}:{number}: old message prefix {old}: {line.strip()}")


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1]).resolve()
    lib = root / "lib"
    sources = sorted(p for p in (lib / "baton").rglob("*") if p.suffix in (".hpp", ".cpp"))
    if not sources:
        print(f"check_error_style: no sources under {lib / 'baton'}", file=sys.stderr)
        return 2
    problems = []
    for path in sources:
        check_calls(path, path.relative_to(root), problems)
    check_old_prefixes(lib, root, problems)
    if problems:
        print("error messages that do not start with 'baton::<area>: ':")
        for p in problems:
            print("  " + p)
        return 1
    print(f"check_error_style: {len(sources)} files, every literal message starts 'baton::<area>: '")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
