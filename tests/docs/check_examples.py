#!/usr/bin/env python3
"""Every program in share/examples/ appears verbatim in a ```cpp (or, for *.py, ```python; for
*.sh, ```sh) block of some docs/*.md file.
usage: check_examples.py <baton source dir>"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
blocks = {"cpp": [], "python": [], "sh": []}
for doc in sorted((root / "docs").glob("*.md")):
    for lang in blocks:
        blocks[lang] += re.findall(r"```" + lang + r"\n(.*?)```", doc.read_text(), re.S)
missing = []
examples = (sorted((root / "share" / "examples").glob("*.cpp")) +
            sorted((root / "share" / "examples").glob("*.py")) +
            sorted((root / "share" / "examples").glob("*.sh")))
for example in examples:
    lang = {".py": "python", ".sh": "sh"}.get(example.suffix, "cpp")
    if example.read_text() not in blocks[lang]:
        missing.append(example.name)
if missing:
    print("examples not shown verbatim in docs/:", ", ".join(missing))
    sys.exit(1)
print(f"{len(examples)} examples match their docs")
