"""Replies made elsewhere: export-set, import-replies, and everything downstream unchanged.

The replies imported here are the reference model's own, copied out of a real run folder into
the import layout, so the imported run must score exactly as that run did.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from stylebench.cli import main
from stylebench.commands.export_set import export_set
from stylebench.commands.importing import IMPORTED, import_replies
from stylebench.commands.reply_folder import scan
from stylebench.commands.runs import report_only, rescore, run
from stylebench.config import make_config
from stylebench.errors import BadValue, FileClash
from stylebench.records import Sample, UserTurn

FAST = {"asr": "none", "vad": "energy", "n_boot": 200}
SELECT = {"dim": "volume", "limit": 1}  # 4 samples: 2 directions x 2 languages, 12 replies


def records(store, stage: str) -> dict:
    """The last record per key of a stage file (test helper)."""
    return {(d["sample_id"], d["turn"]): d for d in store.iter_raw(stage)}


@pytest.fixture(scope="module")
def original(small_set, tmp_path_factory):
    """A finished reference run on the small set (the replies every test imports)."""
    out = tmp_path_factory.mktemp("orig")
    cfg = make_config(model="reference", dialogues=str(small_set), out=str(out), **SELECT, **FAST)
    return run(cfg, progress=False)


def copy_replies(result, dest: Path) -> Path:
    """The run's replies in the import layout: <sample_id>/turnN.wav and turnN.txt."""
    for (sid, k), rec in records(result.store, "respond").items():
        assert rec["status"] == "ok"
        folder = dest / sid
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(result.store.root / rec["audio"], folder / f"turn{k}.wav")
        (folder / f"turn{k}.txt").write_text(rec["text"] + "\n", encoding="utf-8")
    return dest


def do_import(small_set, replies: Path, out: Path, name: str = "lab-model", **extra):
    cfg = make_config(model=name, dialogues=str(small_set), out=str(out), **SELECT, **FAST, **extra)
    return import_replies(cfg, replies, progress=False)


def test_round_trip_scores_every_cell_as_the_original(original, small_set, tmp_path):
    replies = copy_replies(original, tmp_path / "replies")
    imp = do_import(small_set, replies, tmp_path / "runs")
    assert imp.problems == () and (imp.n_ok, imp.n_total) == (12, 12)
    a, b = original.report, imp.report
    assert len(a["cells"]) == 8
    assert b["cells"] == a["cells"]  # VSP, SVD, CIs, n, n_ok per (dim, direction, lang, pair)
    for key in ("per_turn", "relevance", "srd", "mrd", "eligible", "n_turns_ok", "n_turns_total"):
        assert b[key] == a[key], key
    assert b["model"] == "lab-model" and a["model"] == "reference"
    # stored like a real run's replies: the same wav bytes and text channel under audio/
    ra, rb = records(original.store, "respond"), records(imp.store, "respond")
    assert set(ra) == set(rb)
    for key in ra:
        assert rb[key]["sha256"] == ra[key]["sha256"] and rb[key]["text"] == ra[key]["text"]
        assert (imp.store.root / rb[key]["audio"]).read_bytes() == (
            original.store.root / ra[key]["audio"]
        ).read_bytes()
        assert rb[key]["raw"]["imported"]["file"] == f"{key[0]}/turn{key[1]}.wav"
    manifest = imp.store.read_manifest()
    assert manifest["identity"]["model"]["kind"] == IMPORTED
    assert manifest["model"]["files"][f"{key[0]}/turn{key[1]}.txt"]
    # the stored imported run, as any stored run: report and re-score, never re-imported
    before = imp.store.stage_path("respond").read_bytes()
    assert report_only(imp.store.root).report["cells"] == a["cells"]
    again = rescore(imp.store.root, {"volume_db": 5.0}, progress=False)
    assert all(c["vsp"] == 0.0 for c in again.report["cells"])  # 4 dB steps < 5 dB
    assert imp.store.stage_path("respond").read_bytes() == before


def test_downstream_captioning_listening_test_and_compare(original, small_set, tmp_path):
    from stylebench.compare.command import compare_command
    from stylebench.ratings.export import export_ratings

    imp = do_import(small_set, copy_replies(original, tmp_path / "replies"), tmp_path / "runs")
    caption = {"captioner": "features", "caption_judge": "lexicon"}
    a = rescore(original.store.root, caption, progress=False).report["captions"]
    b = rescore(imp.store.root, caption, progress=False).report["captions"]
    assert b == a and a["cells"]
    key = export_ratings(imp.store.root, tmp_path / "listen", raters=2, seed=0)
    assert len(key["items"]) >= 4 and not key["skipped"]
    result, _, _ = compare_command(
        [original.store.root, imp.store.root], calibration=False, out=tmp_path / "cmp"
    )
    board = {s["model"]: s for s in result["leaderboard"]}
    assert board["lab-model"]["mean_vsp"] == board["reference"]["mean_vsp"] == 100.0
    assert not board["lab-model"]["calibration"]


def test_cli_import_then_report(original, small_set, tmp_path, capsys):
    replies = copy_replies(original, tmp_path / "replies")
    fast = ["--asr", "none", "--vad", "energy", "--n-boot", "200", "--judge", "none"]
    argv = ["import-replies", str(small_set), str(replies), "--name", "lab-model"]
    argv += ["--dim", "volume", "--limit", "1", "--out", str(tmp_path / "runs"), "--format", "json"]
    assert main(["--no-progress", *argv, *fast]) == 0
    out, err = capsys.readouterr()
    imported = json.loads(out)
    assert "imported 12 of 12 replies" in err
    root = next((tmp_path / "runs").iterdir())
    assert root.name.startswith("lab-model-volume-all-n1-")
    assert main(["report", str(root), "--format", "json"]) == 0
    reported = json.loads(capsys.readouterr().out)
    assert reported["cells"] == imported["cells"]
    assert [c["vsp"] for c in imported["cells"]] == [c["vsp"] for c in original.report["cells"]]
    # a calibration row's name is refused: compare would take the import for that row
    assert main([*argv, "--name", "reference", *fast]) == 2
    assert "calibration row" in capsys.readouterr().err


def test_bad_inputs_are_one_line_each_and_lose_nothing_else(original, small_set, tmp_path):
    replies = copy_replies(original, tmp_path / "replies")
    ids = sorted(p.name for p in replies.iterdir())
    a, b, c, d = ids
    outside = tmp_path / "outside"
    outside.mkdir()
    (replies / a / "turn2.wav").unlink()  # a missing turn
    sf.write(replies / a / "turn3.wav", np.zeros(16000, np.float32), 16000)  # silent
    (replies / b / "turn1.wav").write_bytes(b"")  # empty
    (replies / c / "turn3.wav").write_text("I am a transcript, not audio")  # not audio
    tone = 0.3 * np.sin(2 * np.pi * 200 * np.arange(8000) / 4000).astype(np.float32)
    sf.write(replies / c / "turn1.wav", tone, 4000)  # a sample rate no measure takes
    cut = (replies / d / "turn1.wav").read_bytes()
    (replies / d / "turn1.wav").write_bytes(cut[: len(cut) // 2])  # cut off mid-write
    shutil.move(replies / d / "turn2.wav", outside / "turn2.wav")
    (replies / d / "turn2.wav").symlink_to(outside / "turn2.wav")  # a link out of the folder
    shutil.move(replies / d / "turn3.wav", outside / "turn3.wav")
    (replies / d / "turn3.wav").symlink_to(Path("..") / ".." / "outside" / "turn3.wav")
    (replies / "not-a-sample").mkdir()
    shutil.copyfile(replies / b / "turn2.wav", replies / "not-a-sample" / "turn1.wav")

    imp = do_import(small_set, replies, tmp_path / "runs", judge="none")
    bad = {
        (a, 2): "no reply file",
        (a, 3): "silent",
        (b, 1): "empty file (0 bytes)",
        (c, 3): "not audio stylebench can read",
        (c, 1): "sample rate 4000 Hz",
        (d, 1): "truncated wav",
        (d, 2): "lies outside",
        (d, 3): "lies outside",
    }
    assert len(imp.problems) == len(bad) + 1, imp.problems
    assert imp.problems[0].startswith("not-a-sample: not a sample of the dialogue set")
    for (sid, k), says in bad.items():
        line = next(p for p in imp.problems if p.startswith(f"{sid}/turn{k}"))
        assert says in line and "\n" not in line, line
    assert (imp.n_ok, imp.n_total) == (12 - len(bad), 12)
    got = records(imp.store, "respond")
    want = records(original.store, "respond")
    feats, orig_feats = records(imp.store, "features"), records(original.store, "features")
    for key, rec in got.items():
        if key in bad:
            assert rec["status"] == "error" and bad[key] in rec["error"], rec
        else:  # everything else imported and measured as in the original run
            assert rec["status"] == "ok" and rec["sha256"] == want[key]["sha256"], key
            mine, theirs = feats[key]["values"], orig_feats[key]["values"]
            if (key[0], key[1] - 1) in bad:  # measures against a turn that is not there
                theirs = {n: v for n, v in theirs.items() if not n.endswith("_prev")}
            assert mine == theirs, key
    assert (b, 2) not in bad and got[(b, 2)]["status"] == "ok"  # after a failed first turn
    assert imp.report["n_turns_total"] == 12
    # read back from the folder as `report` reads it: the same replies, the same scores
    stored = report_only(imp.store.root).report
    assert stored["n_turns_ok"] == imp.report["n_turns_ok"] == 12 - len(bad)
    assert stored["cells"] == imp.report["cells"]
    # a sample id that is not one folder name cannot reach outside the folder either
    turns = tuple(UserTurn("u.wav", "0" * 64, 16000, "hi") for _ in range(3))
    escaping = Sample("../outside", "v", "volume", "intensify", "en", "x", "c", turns)
    (tmp_path / "outside" / "turn1.wav").write_bytes(b"RIFF")
    found = scan(replies, [escaping])
    assert "not one folder name" in found.turns[("../outside", 1)].problem
    assert not found.files


def test_a_changed_file_changes_the_identity(original, small_set, tmp_path):
    replies = copy_replies(original, tmp_path / "replies")
    imp = do_import(small_set, replies, tmp_path / "runs", judge="none")
    before = imp.store.stage_path("respond").read_bytes()
    fp = imp.store.read_manifest()["identity"]["fingerprint"]
    again = do_import(small_set, replies, tmp_path / "runs", judge="none")  # unchanged: resumes
    assert again.store.root == imp.store.root and again.report["cells"] == imp.report["cells"]
    assert imp.store.stage_path("respond").read_bytes() == before  # nothing imported twice

    sid = sorted(p.name for p in replies.iterdir())[0]
    shutil.copyfile(replies / sid / "turn3.wav", replies / sid / "turn2.wav")
    with pytest.raises(BadValue, match=f"{sid}/turn2.wav changed"):
        do_import(small_set, replies, tmp_path / "runs", judge="none")
    # the text channel is part of it too
    (replies / sid / "turn2.txt").write_text("something else\n", encoding="utf-8")
    with pytest.raises(BadValue, match=f"{sid}/turn2.txt changed .*; {sid}/turn2.wav changed"):
        do_import(small_set, replies, tmp_path / "runs", judge="none")
    (replies / sid / "turn3.txt").unlink()
    with pytest.raises(BadValue, match=f"{sid}/turn3.txt removed"):
        do_import(small_set, replies, tmp_path / "runs", judge="none")
    assert imp.store.stage_path("respond").read_bytes() == before  # refused: nothing written
    other = do_import(small_set, replies, tmp_path / "runs", judge="none", run_id="second")
    assert other.store.read_manifest()["identity"]["fingerprint"] != fp
    assert records(other.store, "respond")[(sid, 2)]["text"] == "something else"
    # so are meta.json and the name
    (replies / "meta.json").write_text(json.dumps({"model": "m", "revision": "r2"}))
    with pytest.raises(BadValue, match="model.meta.revision: '<absent>' -> 'r2'"):
        do_import(small_set, replies, tmp_path / "runs", judge="none", run_id="second")
    with pytest.raises(BadValue, match="model.name: 'lab-model' -> 'other-name'"):
        do_import(
            small_set, replies, tmp_path / "runs", "other-name", judge="none", run_id="second"
        )


def test_flac_and_mp3_replies_are_stored_as_wav(original, small_set, tmp_path):
    replies = copy_replies(original, tmp_path / "replies")
    a, b = sorted(p.name for p in replies.iterdir())[:2]
    src = replies / a / "turn2.wav"
    subprocess.run(
        [
            "ffmpeg",
            "-loglevel",
            "error",
            "-i",
            str(src),
            "-b:a",
            "128k",
            str(src.with_suffix(".mp3")),
        ],
        check=True,
    )
    src.unlink()
    wave, sr = sf.read(replies / b / "turn3.wav", dtype="int16")
    sf.write(replies / b / "turn3.flac", wave, sr, subtype="PCM_16")
    (replies / b / "turn3.wav").unlink()
    (replies / "meta.json").write_text(
        json.dumps({"model": "x", "history_kind": "text only", "notes": "free-form"})
    )
    imp = do_import(small_set, replies, tmp_path / "runs", judge="none")
    assert imp.problems == () and imp.n_ok == 12
    got = records(imp.store, "respond")
    mp3, flac = got[(a, 2)], got[(b, 3)]
    assert mp3["raw"]["imported"]["file"] == f"{a}/turn2.mp3"
    for rec in (mp3, flac):
        stored = imp.store.root / rec["audio"]
        assert stored.suffix == ".wav" and stored.read_bytes()[:4] == b"RIFF"
        assert sf.info(stored).samplerate == rec["sr"]
        assert records(imp.store, "features")[(rec["sample_id"], rec["turn"])]["status"] == "ok"
    # flac is lossless: the same samples as the original wav
    back, _ = sf.read(imp.store.root / flac["audio"], dtype="int16")
    assert np.array_equal(back, wave)
    mp3_wave, mp3_sr = sf.read(imp.store.root / mp3["audio"])
    orig_wave, orig_sr = sf.read(original.store.audio_path(a, 2))
    assert mp3_sr == orig_sr and abs(len(mp3_wave) - len(orig_wave)) < 0.1 * orig_sr
    manifest = imp.store.read_manifest()
    assert manifest["identity"]["model"]["meta"]["notes"] == "free-form"
    assert "History kind: text only" in " ".join(imp.report["notes"])
    # two files for one turn: that turn's error, nothing else
    shutil.copyfile(original.store.audio_path(a, 2), replies / a / "turn2.wav")
    two = do_import(small_set, replies, tmp_path / "runs", judge="none", run_id="two")
    assert two.problems == (f"{a}/turn2: both turn2.wav and turn2.mp3; keep one",)
    assert two.n_ok == 11


def test_meta_json_is_checked(original, small_set, tmp_path):
    replies = copy_replies(original, tmp_path / "replies")
    (replies / "meta.json").write_text(json.dumps({"history_kind": "everything"}))
    with pytest.raises(BadValue, match="meta.json: 'history_kind' must be one of"):
        do_import(small_set, replies, tmp_path / "runs")
    (replies / "meta.json").write_text("[1, 2]")
    with pytest.raises(BadValue, match="meta.json: must be a JSON object"):
        do_import(small_set, replies, tmp_path / "runs")
    assert not (tmp_path / "runs").exists()  # refused before any run folder


def test_export_set_then_import_from_the_same_folder(original, small_set, tmp_path, capsys):
    folder = tmp_path / "lab"
    assert main(["export-set", str(small_set), str(folder), "--dim", "volume", "--limit", "1"]) == 0
    capsys.readouterr()
    card = json.loads((folder / "set.json").read_text())
    samples = {s.id: s for s in _samples(small_set)}
    chosen = sorted({sid for sid, _ in records(original.store, "respond")})
    assert sorted(s["id"] for s in card["samples"]) == chosen
    assert card["dims"] == ["volume"] and card["languages"] == ["en", "zh"]
    assert card["directions"] == sorted({samples[sid].direction for sid in chosen})
    assert len(card["directions"]) == 2
    for entry in card["samples"]:
        s = samples[entry["id"]]
        assert (entry["dim"], entry["direction"], entry["lang"]) == (s.dim, s.direction, s.lang)
        for k, t in enumerate(s.turns, start=1):
            user = folder / s.id / f"user{k}.wav"
            assert user.read_bytes() == (small_set / t.audio).read_bytes()
            assert (folder / s.id / f"user{k}.txt").read_text(encoding="utf-8") == t.text + "\n"
    readme = (folder / "README.txt").read_text()
    assert "turnN.wav" in readme and "import-replies" in readme and "--dim volume" in readme
    # again into the same folder: nothing rewritten; a file that differs: refused, none written
    again = export_set(make_config(dialogues=str(small_set), dim="volume", limit=1), folder)
    assert again.written == 0 and again.n_samples == 4
    (folder / card["samples"][0]["id"] / "user2.txt").write_text("edited")
    with pytest.raises(FileClash, match="user2.txt is already there"):
        export_set(make_config(dialogues=str(small_set), dim="volume", limit=2), folder)
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == chosen  # none written
    (folder / card["samples"][0]["id"] / "user2.txt").write_text(
        samples[card["samples"][0]["id"]].turns[1].text + "\n", encoding="utf-8"
    )
    # the lab's replies beside the user turns: the exported files are not problems
    copy_replies(original, folder)
    imp = do_import(small_set, folder, tmp_path / "runs", judge="none")
    assert imp.problems == () and imp.report["cells"] == original.report["cells"]


def _samples(set_root: Path) -> list[Sample]:
    from stylebench.dialogues.sets import load_set

    return load_set(set_root)[0]


def test_nothing_selected_names_the_selection_it_used(original, small_set, tmp_path):
    """Replies of one dim imported under another (the default pitch) say what was selected and
    which dims the folder holds (issue 34)."""
    replies = copy_replies(original, tmp_path / "replies")
    held = {s.dim for s in _samples(small_set) if (replies / s.id).is_dir()}
    other = next(d for d in ("pitch", "volume", "speed") if d not in held)
    cfg = make_config(
        model="lab-model",
        dialogues=str(small_set),
        out=str(tmp_path / "runs"),
        **FAST,
        **{**SELECT, "dim": other},
    )
    with pytest.raises(BadValue) as err:
        import_replies(cfg, replies, progress=False)
    text = str(err.value)
    assert f"the selection was --dim {other} --lang " in text, text
    assert f"the folder holds samples of --dim {','.join(sorted(held))} --lang " in text, text
    assert not (tmp_path / "runs").exists()
