#!/usr/bin/env bash
# Does the suite on pytest-xdist (a file per worker, as `make test` runs it) still fail where it
# should? Each mutation is applied to a clean file, the test files that cover it run with
# `-n 2 --dist loadfile`, and the file is restored from git; the last line of pytest is printed.
# Every line should say "failed". docs/scale.md, "The test suite, the demo and the set-up".
#     bash scripts/parallel_mutations.sh
set -uo pipefail
cd "$(dirname "$0")/.."
PYT=".venv/bin/python -m pytest -q -n 2 --dist loadfile -p no:cacheprovider"
mut() {  # name, file, text, its replacement, test files...
  local name=$1 file=$2 old=$3 new=$4
  shift 4
  git diff --quiet -- "$file" || { echo "$name: $file has changes of its own; skipped"; return; }
  .venv/bin/python - "$file" "$old" "$new" <<'PY'
import pathlib, sys
p = pathlib.Path(sys.argv[1])
s = p.read_text(encoding="utf-8")
assert sys.argv[2] in s, f"mutation target not found in {p}"
p.write_text(s.replace(sys.argv[2], sys.argv[3], 1), encoding="utf-8")
PY
  out=$($PYT "$@" 2>&1 | tail -1)
  git checkout -q -- "$file"
  echo "$name: $out"
}
mut "scoring: a change of exactly 0 counts as moved" stylebench/scoring/cells.py \
  "return signed > 0 and signed >= thr" "return signed >= 0 and signed >= thr" \
  tests/test_scoring.py tests/test_dims.py
mut "scoring: the just-noticeable threshold dropped" stylebench/scoring/cells.py \
  "return signed > 0 and signed >= thr * (1.0 - _BOUNDARY_EPS)" "return signed > 0" \
  tests/test_scoring.py tests/test_dims.py
mut "rule: a turn with no alignment counts as the same words" metrics/validity.py \
  'return float(cur.get("dtw_cost_prev", math.inf)) < SAME_CONTENT_COST' \
  'return float(cur.get("dtw_cost_prev", 0.0)) < SAME_CONTENT_COST' \
  tests/test_validity.py tests/test_dims.py tests/test_alignment.py
mut "store: a later error supersedes an ok record" stylebench/store.py \
  'if prev is not None and prev.status == "ok" and rec.status != "ok":' "if False:" \
  tests/test_store.py tests/test_resume_kill.py
