#!/usr/bin/env python3
"""Every program in share/examples/ appears verbatim in a ```cpp block of some docs/*.md file.
usage: check_examples.py <baton source dir>"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
blocks = []
for doc in sorted((root / "docs").glob("*.md")):
    blocks += [(doc.name, b) for b in re.findall(r"```cpp\n(.*?)```", doc.read_text(), re.S)]
missing = []
for example in sorted((root / "share" / "examples").glob("*.cpp")):
    text = example.read_text()
    if not any(block == text for _, block in blocks):
        missing.append(example.name)
if missing:
    print("examples not shown verbatim in docs/:", ", ".join(missing))
    sys.exit(1)
print(f"{len(list((root / 'share' / 'examples').glob('*.cpp')))} examples match their docs")
