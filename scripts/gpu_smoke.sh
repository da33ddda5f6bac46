#!/usr/bin/env bash
# GPU smoke check: run each installed model on two samples and print what worked.
#
#   scripts/gpu_smoke.sh                      # reference + every real model that is installed
#   scripts/gpu_smoke.sh kimi-audio glm-4-voice
#
# Each model runs `stylebench run --model M --dim pitch --lang en --limit 1` (two samples: one
# intensify, one attenuate, three turns each), one after another; a failure never stops the
# others. The table at the end (also written to $SB_SMOKE_OUT/smoke.tsv) gives per model:
# status (ok / turns failed / run failed / skipped), seconds, turns ok, and the first error line.
#
# Per-model settings come from environment variables named after the model, upper-cased with
# every non-alphanumeric character turned into "_" (kimi-audio -> KIMI_AUDIO,
# minicpm-o-2.6 -> MINICPM_O_2_6):
#   SB_WORKER_PYTHON_<M>   run the model as a worker in that env's python (docs/models.md#worker)
#   SB_MODEL_ARGS_<M>      space-separated KEY=VALUE model args, e.g. "path=/w/kimi repo=/src/K"
# Global settings:
#   SB_SMOKE_OUT           where run folders go (default runs/gpu-smoke)
#   SB_SMOKE_ARGS          extra `stylebench run` flags (default "--asr none --vad energy --judge none")
#   SB_SMOKE_DIALOGUES     dialogue set folder (default: the built-in set)
#   SB_TURN_TIMEOUT        worker turn timeout in seconds (default 600)
#   SB_MODEL_TIMEOUT       wall-clock limit per model in seconds (default 3600)
#   STYLEBENCH             the command to call (default: stylebench)
#   SB_SMOKE_TINY          1 (default): first run the tiny random Qwen2.5-Omni / Qwen3-Omni
#                          models three turns on each device in SB_SMOKE_TINY_DEVICES (default
#                          "cuda", plus "cuda:1" when there are two GPUs), with no weights and
#                          no network (scripts/gpu_tiny_qwen.py); 0 skips it
#   SB_SMOKE_WHISPER       1 (default): then batched Whisper throughput on reply-like clips at
#                          batch 1, 16 and 64 (scripts/gpu_whisper_throughput.py: large-v3
#                          shapes with random weights unless SB_SMOKE_WHISPER_MODEL names a
#                          CTranslate2 folder), table in $SB_SMOKE_OUT/whisper.tsv; 0 skips it
#   SB_SMOKE_PYTHON        the python that has torch and stylebench (default python3)
# Wheels only: on a machine without internet, install the wheels you carried in with
#   pip install --no-index --find-links WHEELS torch transformers accelerate soundfile scipy ...
#   pip install --no-index --no-deps -e .
# then run this script; the tiny Qwen check needs nothing else (HF_HUB_OFFLINE is set).
# Models whose status is "missing package" (here, or in their worker env) are skipped;
# "missing weights" is skipped too unless SB_MODEL_ARGS_<M> is set (it may name a local path).
# openai-audio runs only when SB_MODEL_ARGS_OPENAI_AUDIO names an endpoint.
set -uo pipefail

SB=${STYLEBENCH:-stylebench}
OUT=${SB_SMOKE_OUT:-runs/gpu-smoke}
EXTRA=${SB_SMOKE_ARGS:---asr none --vad energy --judge none}
TURN_TIMEOUT=${SB_TURN_TIMEOUT:-600}
MODEL_TIMEOUT=${SB_MODEL_TIMEOUT:-3600}
mkdir -p "$OUT"
TSV="$OUT/smoke.tsv"
printf 'model\tstatus\tseconds\tturns_ok\terror\n' >"$TSV"

var_of() { printf '%s_%s' "$1" "$(printf '%s' "$2" | tr '[:lower:]' '[:upper:]' | tr -c 'A-Z0-9\n' '_')"; }
env_of() { local v; v=$(var_of "$1" "$2"); printf '%s' "${!v:-}"; }

PYBIN=${SB_SMOKE_PYTHON:-python3}
if [ "${SB_SMOKE_TINY:-1}" != 0 ]; then
  devices=${SB_SMOKE_TINY_DEVICES:-}
  if [ -z "$devices" ]; then
    n=$("$PYBIN" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)
    devices=cuda; [ "${n:-0}" -ge 2 ] && devices="cuda cuda:1"
  fi
  for dev in $devices; do
    echo "[smoke] tiny random Qwen models on $dev" >&2
    "$PYBIN" "$(dirname "$0")/gpu_tiny_qwen.py" --device "$dev" --out "$OUT/tiny.tsv" \
      >/dev/null 2>"$OUT/tiny-$dev.log"
  done
  # model, device, dtype, status, seconds, detail -> the table's columns
  [ -f "$OUT/tiny.tsv" ] && awk -F'\t' -v OFS='\t' '{ t = ($4 == "ok") ? "3/3" : "-";
    print "tiny-" $1 "@" $2, $4, $5, t, ($4 == "ok") ? "" : $6 }' "$OUT/tiny.tsv" >>"$TSV"
  rm -f "$OUT/tiny.tsv"
fi

if [ "${SB_SMOKE_WHISPER:-1}" != 0 ]; then
  echo "[smoke] batched Whisper throughput on ${SB_SMOKE_WHISPER_DEVICE:-cuda}" >&2
  wargs=(--device "${SB_SMOKE_WHISPER_DEVICE:-cuda}" --out "$OUT/whisper.tsv")
  [ -n "${SB_SMOKE_WHISPER_MODEL:-}" ] && wargs+=(--model "$SB_SMOKE_WHISPER_MODEL")
  "$PYBIN" "$(dirname "$0")/gpu_whisper_throughput.py" "${wargs[@]}" >/dev/null \
    2>"$OUT/whisper.log" || echo "[smoke] Whisper throughput failed: see $OUT/whisper.log" >&2
fi

HERE_STATUS=$($SB models 2>&1) || { echo "[smoke] \`$SB models\` failed: $HERE_STATUS" >&2; exit 2; }

# status line of one model: "<status>\t<detail>", checked in its worker env when it has one
status_of() {
  local model=$1 py=$2 out=$HERE_STATUS
  if [ -n "$py" ]; then
    out=$($SB models --worker-python "$py" 2>&1) || { printf 'error\t%s' "$(tail -n1 <<<"$out")"; return; }
  fi
  awk -v m="$model" '$1 == m { sub(/^[^ ]+ +/, ""); s = ($0 ~ /^missing package/) ? "missing package" : ($0 ~ /^missing weights/) ? "missing weights" : ($0 ~ /^available/) ? "available" : "error"; d = $0; sub(/^(missing package|missing weights|available|error) +/, "", d); printf "%s\t%s", s, d }' <<<"$out"
}

# "<ok>/<total>\t<first error>" from a run folder's respond records (latest record per turn)
respond_summary() {
  python3 - "$1" <<'PY'
import json, sys
from pathlib import Path
latest = {}
path = Path(sys.argv[1]) / "respond.jsonl"
for line in (path.read_text(encoding="utf-8").splitlines() if path.exists() else []):
    try:
        r = json.loads(line)
    except json.JSONDecodeError:
        continue
    latest[(r["sample_id"], r["turn"])] = r
ok = sum(r["status"] == "ok" for r in latest.values())
errors = [r["error"] for r in latest.values() if r["status"] != "ok" and not r["error"].startswith("not asked")]
first = errors[0].splitlines()[0][:200] if errors else ""
print(f"{ok}/{len(latest)}\t{first}")
PY
}

if [ $# -gt 0 ]; then
  MODELS=("$@")
else
  mapfile -t MODELS < <(awk '$1 != "neutral" && $1 != "shuffled" { print $1 }' <<<"$HERE_STATUS")
fi

for model in "${MODELS[@]}"; do
  py=$(env_of SB_WORKER_PYTHON "$model")
  margs=$(env_of SB_MODEL_ARGS "$model")
  IFS=$'\t' read -r status detail <<<"$(status_of "$model" "$py")"
  skip=""
  if [ -z "${status:-}" ]; then
    skip="unknown model"
  elif [ "$status" = "missing package" ] || [ "$status" = "error" ]; then
    skip="$status: $detail"
  elif [ "$status" = "missing weights" ] && [ -z "$margs" ]; then
    skip="missing weights: $detail"
  elif [ "$model" = "openai-audio" ] && [ -z "$margs" ]; then
    skip="set $(var_of SB_MODEL_ARGS "$model") to an endpoint (base_url=... model=...)"
  fi
  if [ -n "$skip" ]; then
    printf '%s\tskipped\t0\t-\t%s\n' "$model" "${skip:0:200}" >>"$TSV"
    echo "[smoke] $model: skipped ($skip)" >&2
    continue
  fi
  cmd=($SB --no-progress run --model "$model" --dim pitch --lang en --limit 1
       --out "$OUT" --run-id "smoke-$model" $EXTRA)
  [ -n "${SB_SMOKE_DIALOGUES:-}" ] && cmd+=(--dialogues "$SB_SMOKE_DIALOGUES")
  [ -n "$py" ] && cmd+=(--worker-python "$py" --turn-timeout-s "$TURN_TIMEOUT")
  for kv in $margs; do cmd+=(--model-arg "$kv"); done
  echo "[smoke] $model: ${cmd[*]}" >&2
  log="$OUT/smoke-$model.log"
  start=$(date +%s)
  timeout "$MODEL_TIMEOUT" "${cmd[@]}" >"$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  IFS=$'\t' read -r turns err <<<"$(respond_summary "$OUT/smoke-$model")"
  if [ $rc -eq 0 ] && [ -n "$turns" ] && [ "${turns%/*}" = "${turns#*/}" ] && [ "${turns#*/}" != 0 ]; then
    result=ok
  elif [ $rc -eq 0 ]; then
    result="turns failed"
  else
    result="run failed (exit $rc)"
    [ $rc -eq 124 ] && result="timed out"
    [ -z "${err:-}" ] && err=$(grep -v '^\s*$' "$log" | tail -n1 | cut -c1-200)
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$model" "$result" "$secs" "${turns:--}" "${err:-}" >>"$TSV"
done

echo
column -t -s $'\t' "$TSV" 2>/dev/null || cat "$TSV"
echo
if [ -s "$OUT/whisper.tsv" ]; then
  column -t -s $'\t' "$OUT/whisper.tsv" 2>/dev/null || cat "$OUT/whisper.tsv"
  echo
fi
echo "table: $TSV; per-model logs and run folders: $OUT/" >&2
