"""Scoring, reporting and comparing at paper scale: synthetic run folders, timed.

Three steps, each a subcommand:

``seed``: a small real set (espeak-ng, 2 samples per cell of ``--dim all``: 24 samples) and the
three calibration models run on it with the default settings (Whisper base, the features, the
offline judge): the records every synthetic run is made from.

``make``: for each size, a dialogue set of ``24 x R`` samples (each seed sample cloned ``R``
times under a new id; the clones share the seed's user-turn wavs, which the commands only hash)
and run folders on it: ``model01`` ... ``model10`` and the calibration rows ``reference``,
``neutral``, ``shuffled`` under the names ``stylebench compare`` looks for. Every record has the
real record type and the fingerprint the real stage plans (respond: ``turn_fp``; the later
stages: each stage's own ``plan()``), so the commands find every record done and compute
nothing, as on a finished run. The values come from the seed runs: a synthetic model's sample
copies the reference run's records with probability p (model01 0.1 ... model10 1.0) and the
neutral run's otherwise, and every feature value is jittered (x (1 + N(0, 0.03))), so models
differ and no two replies are equal. Each reply has its own sha256 (so transcription is planned
one reply a unit, as in a real run) while its wav is one of the seed's, shared: nothing in
``score``, ``report`` or ``compare`` reads a reply's bytes when its records are all there.

``page``: each comparison's compare.html opened in headless Chromium (its size, load time,
elements and audio players, a table sorted, a cell's sample page opened by its link).

``time``: ``stylebench score`` / ``report`` on 1, 3 and 10 runs (one after the other), and
``stylebench compare`` of 1, 3 and 10 runs (the calibration rows found beside them, read, or
resumed where a resume would compute something, as a real comparison does), each as its own
process: ``compare`` with no kept copies of the runs' scores (it reads the records and keeps
copies, stylebench/compare/kept.py) and ``compare-kept``, the same comparison again, reading
them (each timing has its own cache root, ``<work>/cache[-<tag>]``); wall and CPU seconds and the peak resident memory of the largest process
(``os.wait4``), and the growth exponent between sizes (``log(t2 / t1) / log(n2 / n1)``: 1.0 is
linear). ``--tag`` names the code timed (each row says it; compare writes ``compare-<n>-<tag>``):
run the script with another checkout's python to time that checkout's ``stylebench`` beside
this one's on the same folders.

    python benchmarks/scale.py seed --work /tmp/scale
    python benchmarks/scale.py make --work /tmp/scale --sizes 3,30,300,600
    python benchmarks/scale.py time --work /tmp/scale --sizes 3,30,300,600 --runs 1,3,10
    python benchmarks/scale.py page --work /tmp/scale --sizes 600 --runs 10
    OLD/.venv/bin/python benchmarks/scale.py time --work /tmp/scale --sizes 30 --runs 10 \
        --commands compare --tag before   # then with this checkout's python and --tag after

Size ``R`` = 3 is the default set's run (72 samples, 216 replies): 1x; 30 = 10x, 300 = 100x and
600 = the paper (14.4K samples, 43.2K replies per model).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SEED_MODELS = ("reference", "neutral", "shuffled")
#: a synthetic model takes its sample from the reference run with this probability
MODELS = {f"model{i:02d}": i / 10 for i in range(1, 11)}
JITTER = 0.03


def conditions() -> str:
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{os.cpu_count()} cores, load average (1/5/15 min) {load}"


def sb(*args: str, env: dict[str, str] | None = None) -> list[str]:
    return [sys.executable, "-m", "stylebench.cli", "--no-progress", *args]


# -- seed --------------------------------------------------------------------------------------


def seed(work: Path) -> None:
    """The small real set and the three calibration runs every synthetic run is made from."""
    set_root, runs = work / "seed" / "set", work / "seed" / "runs"
    if not (set_root / "manifest.jsonl").is_file():
        subprocess.run(
            sb(
                "build-dialogues",
                "--synth",
                "espeak-ng",
                "--no-asr-check",
                "--per-cell",
                "2",
                "--out",
                str(set_root),
            ),
            check=True,
        )
    for model in SEED_MODELS:
        subprocess.run(
            sb(
                "run",
                "--model",
                model,
                "--dim",
                "all",
                "--lang",
                "all",
                "--dialogues",
                str(set_root),
                "--out",
                str(runs),
                "--run-id",
                model,
            ),
            check=True,
            stdout=subprocess.DEVNULL,
        )


def load_seed(work: Path) -> dict[str, Any]:
    """Each seed run: its stored run (config, samples) and its current records by stage."""
    from stylebench.commands.runs import open_stored
    from stylebench.stages.runner import measure

    out = {}
    for model in SEED_MODELS:
        run = open_stored(work / "seed" / "runs" / model)
        replies = run.replies()
        measured = measure(
            run.store,
            run.samples,
            run.cfg,
            replies,
            compute=False,
            progress=False,
            manifest=run.manifest,
        )
        out[model] = {"run": run, "records": {**measured.records, "respond": replies}}
    return out


# -- make --------------------------------------------------------------------------------------


def make_set(work: Path, seed_run: Any, r: int) -> tuple[Path, list[Any], str]:
    """The seed set's samples cloned ``r`` times (ids ``<seed id>-r0001``...), sharing its wavs."""
    from stylebench.dialogues.sets import load_set

    root = work / f"x{r}" / "set"
    seed_root = seed_run.set_root
    samples_seed, _ = load_set(seed_root, check_audio=False)
    samples = [
        dataclasses.replace(s, id=f"{s.id}-r{j:04d}") for j in range(r) for s in samples_seed
    ]
    if not (root / "manifest.jsonl").is_file():
        root.mkdir(parents=True, exist_ok=True)
        shutil.copytree(seed_root / "audio", root / "audio", dirs_exist_ok=True)
        shutil.copy(seed_root / "set_card.json", root / "set_card.json")
        lines = [
            json.dumps(dataclasses.asdict(s), ensure_ascii=False, sort_keys=True) for s in samples
        ]
        (root / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    checksum = hashlib.sha256((root / "manifest.jsonl").read_bytes()).hexdigest()
    return root, samples, checksum


def jittered(rec: Any, rng: Any) -> Any:
    values = getattr(rec, "values", None)
    if not values:
        return rec
    out = {}
    for k, v in values.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v == 0:
            out[k] = v
        else:
            out[k] = float(v) * (1.0 + JITTER * float(rng.standard_normal()))
    return dataclasses.replace(rec, values=out)


def write_records(path: Path, records: list[Any]) -> None:
    from stylebench.records import to_json_dict

    with open(path, "w", encoding="utf-8") as fh:
        for rec in records:
            line = json.dumps(
                to_json_dict(rec), ensure_ascii=False, sort_keys=True, allow_nan=False
            )
            fh.write(line + "\n")


def make_run(
    parent: Path,
    name: str,
    model: str,
    seeds: dict[str, Any],
    sources: dict[str, str],
    set_root: Path,
    samples: list[Any],
    checksum: str,
    identity: Any,
    seed_of: dict[str, str],
    rng: Any,
) -> Path:
    """One synthetic run folder: ``sources[sample id]`` names the seed run each sample copies."""
    from stylebench.commands.manifest import dialogues_entry
    from stylebench.config import resolve_config
    from stylebench.pipeline.keys import turn_fp
    from stylebench.records import RunRecords
    from stylebench.stages.registry import STAGES, StageInputs
    from stylebench.store import RunStore

    root = parent / name
    if (root / "manifest.json").is_file():
        return root
    base = seeds["reference"]["run"]
    cfg = resolve_config(
        {"model": model, "dialogues": str(set_root), "out": str(parent), "run_id": name},
        base={
            k: v
            for k, v in base.cfg.flat().items()
            if k not in ("model", "dialogues", "out", "run_id")
        },
    )
    store = RunStore(root)
    store.make_folder()
    for src in set(sources.values()):
        shutil.copytree(
            seeds[src]["run"].store.root / "audio", root / "audio" / src, dirs_exist_ok=True
        )
    manifest = json.loads(json.dumps(seeds[next(iter(sources.values()))]["run"].manifest))
    manifest.update(
        run_id=name,
        config=cfg.to_dict(),
        identity=identity.to_dict(),
        model=identity.model,
        dialogues=dialogues_entry(set_root, checksum, samples),
    )
    replies = {}
    for s in samples:
        src, prior = sources[s.id], []
        for k in s.turn_numbers:
            rec = seeds[src]["records"]["respond"].get((seed_of[s.id], k))
            if rec is None:
                break
            sha = hashlib.sha256(f"{name}/{s.id}/{k}".encode()).hexdigest()
            rec = dataclasses.replace(
                rec,
                sample_id=s.id,
                fp=turn_fp(identity, s, k, prior),
                sha256=sha,
                audio=f"audio/{src}/{Path(rec.audio).name}" if rec.audio else "",
            )
            replies[(s.id, k)] = rec
            prior.append(sha)
    write_records(store.stage_path("respond"), list(replies.values()))
    records = RunRecords({"respond": replies})
    for spec in STAGES:
        if not spec.runs(cfg, samples):
            continue
        ctx = StageInputs(
            store,
            samples,
            cfg,
            RunRecords({n: records[n] for n in spec.input_names}),
            False,
            manifest,
        )
        built = spec.build(ctx)
        made = {}
        for unit in built.stage.plan():
            for (sid, k), fp in unit.fps.items():
                rec = seeds[sources[sid]]["records"].get(spec.name, {}).get((seed_of[sid], k))
                if rec is not None:
                    made[(sid, k)] = jittered(dataclasses.replace(rec, sample_id=sid, fp=fp), rng)
        if built.close is not None:
            built.close()
        write_records(store.stage_path(spec.name), list(made.values()))
        records[spec.name] = made
    store.write_manifest(manifest)
    return root


def make(work: Path, sizes: list[int], n_models: int) -> None:
    import numpy as np

    from stylebench.commands.manifest import stored_identity
    from stylebench.pipeline.keys import Identity

    seeds = load_seed(work)
    base = seeds["reference"]["run"]
    decode = stored_identity(base.manifest).decode
    for r in sizes:
        t0 = time.perf_counter()
        set_root, samples, checksum = make_set(work, base, r)
        seed_of = {s.id: s.id.rsplit("-r", 1)[0] for s in samples}
        parent = work / f"x{r}" / "runs"
        prefix = f"-all-all-{checksum[:8]}"  # the names compare looks its calibration rows up by
        runs = [  # (folder, model, the seed run each sample copies, identity, jitter)
            (
                model + prefix,
                model,
                dict.fromkeys(seed_of, model),
                stored_identity(seeds[model]["run"].manifest),
                np.random.default_rng(0),
            )
            for model in SEED_MODELS
        ]
        for i, (name, p) in enumerate(list(MODELS.items())[:n_models]):
            rng = np.random.default_rng(i + 1)
            sources = {s: "reference" if rng.random() < p else "neutral" for s in seed_of}
            runs.append(
                (
                    name,
                    name,
                    sources,
                    Identity({"name": name, "revision": "synthetic"}, decode),
                    rng,
                )
            )
        for name, model, sources, identity, rng in runs:
            make_run(
                parent,
                name,
                model,
                seeds,
                sources,
                set_root,
                samples,
                checksum,
                identity,
                seed_of,
                rng,
            )
        size = sum(f.stat().st_size for f in parent.rglob("*.jsonl"))
        print(
            f"x{r}: {len(samples)} samples, {3 * len(samples)} replies per run, records "
            f"{size / 1e6:.0f} MB in all, made in {time.perf_counter() - t0:.0f} s",
            flush=True,
        )


# -- time --------------------------------------------------------------------------------------


def kept_cache(work: Path, tag: str, *, empty: bool) -> Path:
    """The cache root the comparisons of this timing use: its own, so that the kept copies of
    the runs' scores (stylebench/compare/kept.py) are those of this code and this work folder
    only; ``empty`` removes the copies first. Its models folder is the user's (read only)."""
    from_user = Path(os.environ.get("STYLEBENCH_CACHE") or Path.home() / ".cache" / "stylebench")
    cache = work / (f"cache-{tag}" if tag else "cache")
    cache.mkdir(parents=True, exist_ok=True)
    if not (cache / "models").exists() and (from_user / "models").is_dir():
        (cache / "models").symlink_to(from_user / "models", target_is_directory=True)
    if empty:
        shutil.rmtree(cache / "compare-kept", ignore_errors=True)
    return cache


def timed(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> dict[str, float]:
    """Wall and CPU seconds and peak RSS (MB, the largest process) of ``cmd``."""
    with open(log, "ab") as fh:
        fh.write(("$ " + " ".join(cmd) + "\n").encode())
        fh.flush()
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fh, stderr=fh, env=env)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}; see {log}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "peak_mb": ru.ru_maxrss / 1024}


def time_all(
    work: Path, sizes: list[int], n_runs: list[int], commands: list[str], tag: str = ""
) -> list[dict]:
    rows = []
    log = work / "time.log"
    for r in sizes:
        parent = work / f"x{r}" / "runs"
        models = [parent / m for m in MODELS]
        for cmd in commands:
            for n in n_runs:
                print(f"x{r} {cmd} {n} ({conditions()})", flush=True)
                if cmd in ("compare", "compare-kept"):
                    # compare: no kept copies (the runs' records read, scored and kept);
                    # compare-kept: the same comparison again, reading the copies compare kept
                    name = f"compare-{n}-{tag}" if tag else f"compare-{n}"
                    out = work / f"x{r}" / (name + ("-kept" if cmd == "compare-kept" else ""))
                    cache = kept_cache(work, tag, empty=cmd == "compare")
                    env = {**os.environ, "STYLEBENCH_CACHE": str(cache)}
                    got = timed(
                        sb("compare", *map(str, models[:n]), "--out", str(out)), log, env=env
                    )
                else:
                    got = {"wall": 0.0, "cpu": 0.0, "peak_mb": 0.0}
                    for m in models[:n]:
                        one = timed(sb(cmd, str(m), "--format", "json"), log)
                        got = {
                            "wall": got["wall"] + one["wall"],
                            "cpu": got["cpu"] + one["cpu"],
                            "peak_mb": max(got["peak_mb"], one["peak_mb"]),
                        }
                row = {"size": r, "replies": 72 * r, "command": cmd, "runs": n, **got}
                if tag:
                    row["code"] = tag
                row["load"] = os.getloadavg()[0]
                rows.append(row)
                print(json.dumps(row), flush=True)
                with open(work / "time.jsonl", "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(row) + "\n")
    return rows


def page(work: Path, r: int, n: int) -> dict[str, Any]:
    """Open ``compare.html`` of the ``n``-run comparison at size ``r`` in headless Chromium
    (Playwright driving the system's chromium): its size, the time to load it, its elements
    and audio players, then one cell's sample page the same way, opened by clicking its value."""
    from playwright.sync_api import sync_playwright

    folder = work / f"x{r}" / f"compare-{n}"
    main_page = folder / "compare.html"
    pages = sorted((folder / "samples").glob("s-*.html"))
    out: dict[str, Any] = {
        "size": r,
        "runs": n,
        "compare_html_mb": main_page.stat().st_size / 1e6,
        "sample_pages": len(pages),
        "largest_sample_page_mb": max(p.stat().st_size for p in pages) / 1e6,
    }
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        tab = browser.new_page()
        t0 = time.perf_counter()
        tab.goto(main_page.as_uri(), wait_until="load", timeout=600_000)
        out["load_s"] = time.perf_counter() - t0
        out["elements"] = tab.evaluate("document.getElementsByTagName('*').length")
        out["audio"] = tab.evaluate("document.getElementsByTagName('audio').length")
        t0 = time.perf_counter()
        tab.click("#leaderboard th:nth-child(2)")  # sort a table: the page still answers
        out["sort_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        tab.click("#cells a")
        tab.wait_for_load_state("load")
        out["sample_page_load_s"] = time.perf_counter() - t0
        out["sample_page_audio"] = tab.evaluate("document.getElementsByTagName('audio').length")
        browser.close()
    return out


def table(rows: list[dict]) -> str:
    """Markdown: time and peak memory per command, runs and size, and the growth exponent of
    CPU time from the size before (1.0 = linear)."""
    out = [
        "| command | runs | replies per run | code | wall s | CPU s | peak MB "
        "| CPU growth exponent | load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    prev: dict[tuple[str, int, str], dict] = {}
    rows = sorted(rows, key=lambda x: (x["command"], x["runs"], x.get("code", ""), x["size"]))
    for row in rows:
        key = (row["command"], row["runs"], row.get("code", ""))
        p = prev.get(key)
        exp = (
            f"{math.log(row['cpu'] / p['cpu']) / math.log(row['size'] / p['size']):.2f}"
            if p and p["cpu"] > 0
            else "—"
        )
        out.append(
            f"| {row['command']} | {row['runs']} | {row['replies']:,} | {row.get('code', '')} "
            f"| {row['wall']:.1f} "
            f"| {row['cpu']:.1f} | {row['peak_mb']:.0f} | {exp} | {row['load']:.1f} |"
        )
        prev[key] = row
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=("seed", "make", "time", "table", "page"))
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--sizes", default="3,30,300,600", help="clones of each seed sample")
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--runs", default="1,3,10", help="runs per score/report/compare")
    ap.add_argument("--commands", default="score,report,compare,compare-kept")
    ap.add_argument(
        "--tag",
        default="",
        help="names this timing's code (e.g. before/after): compare writes compare-<n>-<tag>, "
        "and each row says it; run the script with another checkout's python to time its code",
    )
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",")]
    a.work.mkdir(parents=True, exist_ok=True)
    print(conditions(), flush=True)
    if a.step == "seed":
        seed(a.work)
    elif a.step == "make":
        make(a.work, sizes, a.models)
    elif a.step == "time":
        rows = time_all(
            a.work, sizes, [int(x) for x in a.runs.split(",")], a.commands.split(","), a.tag
        )
        print(table(rows))
    elif a.step == "page":
        for r in sizes:
            for n in (int(x) for x in a.runs.split(",")):
                print(json.dumps(page(a.work, r, n)), flush=True)
    else:
        rows = [json.loads(x) for x in (a.work / "time.jsonl").read_text().splitlines()]
        print(table([r for r in rows if r["size"] in sizes]))
    print(conditions(), flush=True)


if __name__ == "__main__":
    main()
