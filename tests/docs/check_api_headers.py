#!/usr/bin/env python3
"""docs/api.md lists every installed header outside detail/, and only headers that exist."""
import pathlib, re, sys

root = pathlib.Path(sys.argv[1])
lib = root / "lib"
installed = {str(p.relative_to(lib)) for p in (lib / "baton").rglob("*.hpp") if "detail" not in p.parts}
installed.add("baton/core/config.hpp")  # generated from config.hpp.in
text = (root / "docs" / "api.md").read_text()
listed = set()
for row in re.findall(r"^\| `(baton/[^|]*)\|", text, re.M):
    first = re.findall(r"`([^`]+\.hpp)`", "`" + row)
    folder = None
    for name in first:
        if name.startswith("baton/"):
            folder = name.rsplit("/", 1)[0]
            listed.add(name)
        elif folder:
            listed.add(folder + "/" + name)
missing = sorted(installed - listed)
stale = sorted(listed - installed)
for h in missing:
    print(f"docs/api.md: installed header {h} is not described")
for h in stale:
    print(f"docs/api.md: names {h}, which does not exist")
sys.exit(1 if missing or stale else 0)
