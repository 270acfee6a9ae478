#!/usr/bin/env bash
# Counts repeated code (clones of six or more lines, same tokens up to literal values) with
# jscpd pinned in package-lock.json and configured in .jscpd.json, for the working tree or
# for each git revision given.
#   testing/measure/duplication/count.sh            # the working tree
#   testing/measure/duplication/count.sh REV...     # committed trees, e.g. 80c2098 HEAD
# Prints one line per tree: clones, duplicated lines, lines scanned. --list adds the pairs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(git -C "$here" rev-parse --show-toplevel)"
list=0
if [[ "${1:-}" == "--list" ]]; then list=1; shift; fi
if [[ ! -x "$here/node_modules/.bin/jscpd" ]]; then
    (cd "$here" && npm ci --no-audit --no-fund --silent)
fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

count() { # name dir
    local out="$scratch/report-$1"
    # Every tracked source folder; the report only, no console noise.
    (cd "$2" && "$here/node_modules/.bin/jscpd" -c "$here/.jscpd.json" -o "$out" -s \
        $(git -C "$2" ls-files '*.rs' '*.py' '*.sh' | cut -d/ -f1 | sort -u | grep -v '\.') \
        >/dev/null 2>&1)
    python3 - "$1" "$out/jscpd-report.json" "$list" <<'PY'
import json, sys
name, path, listing = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
report = json.load(open(path))
total = report["statistics"]["total"]
print(f"{name}: {total['clones']} clones, {total['duplicatedLines']} duplicated lines "
      f"of {total['lines']} ({total['sources']} files)")
if listing:
    for d in sorted(report["duplicates"], key=lambda d: -d["lines"]):
        a, b = d["firstFile"], d["secondFile"]
        print(f"  {d['lines']:4} lines  {a['name']}:{a['start']}  {b['name']}:{b['start']}")
PY
}

if [[ $# -eq 0 ]]; then
    count "working tree" "$root"
else
    for rev in "$@"; do
        dir="$scratch/tree-$rev"
        mkdir -p "$dir"
        git -C "$root" archive "$rev" | tar -x -C "$dir"
        git -C "$dir" init -q && git -C "$dir" add -A >/dev/null
        count "$(git -C "$root" rev-parse --short "$rev")" "$dir"
    done
fi
