"""``import-replies``: replies made anywhere become the respond stage of a normal run folder.

A lab runs its own inference on the user turns (``export-set``), or records a closed realtime
model through its app, and saves the replies in the layout of
:mod:`stylebench.commands.reply_folder`. :class:`ImportStage` stands where the respond stage
stands: it writes the same records into ``respond.jsonl`` (each wav stored under ``audio/`` before
its record is appended) with the same per-turn fingerprints, so every later stage, ``score``,
``report``, ``compare`` and the listening test read an imported run as they read any other.

The run's identity is the import's name, the folder's ``meta.json`` and the sha256 of every reply
and text file (:func:`imported_identity`): importing changed files into the same run folder is
refused, naming the files, as a changed model configuration is for ``stylebench run``.

Each reply is checked as the features stage would check it (:func:`stylebench.audio.load_audio`:
missing, empty, not audio, truncated, NaN, too short, silent, a sample rate outside
8-192 kHz) and against the run's ``--max-reply-s`` and ``--max-reply-chars``; a reply that fails
is that turn's error record with the reason. Unlike ``run``, a failed turn does not stop the
later turns of its sample: their replies exist already (made after a history stylebench cannot
see), so they are imported and measured; the scores that need the failed turn are unscored.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from stylebench.atomic import write_bytes
from stylebench.audio import (
    MAX_SR,
    MIN_SR,
    AudioError,
    check_length,
    load_audio,
    sha256_file,
    wav_truncation,
)
from stylebench.commands.reply_folder import ReplyFolder, TurnFiles, scan
from stylebench.config import RunConfig
from stylebench.errors import BadValue
from stylebench.pipeline.keys import Identity, turn_fp
from stylebench.pipeline.stage import Unit, is_ok
from stylebench.records import RESPONSES, DecodeConfig, Key, RecordKind, RespondRecord, Sample
from stylebench.stages.respond import ReplyLimits, RespondStage
from stylebench.store import RunStore

#: ``identity.model.kind`` of an imported run
IMPORTED = "imported replies"
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,99}")
#: the formats libsndfile writes as RIFF/WAVE: such a file is stored byte for byte
WAV_FORMATS = ("WAV", "WAVEX")
#: a decoded file (flac, mp3) is stored as PCM wav at its own depth; lossy or float sources at 24 bit
PCM_SUBTYPES = {"PCM_16": "int16", "PCM_24": "int32", "PCM_32": "int32"}
DECODE_NOTE = (
    "imported replies: stylebench decoded nothing; the decode settings the replies were made "
    "with are meta.json's 'decode', as declared"
)


@dataclass(frozen=True)
class ImportResult:
    """The run folder, its report and counts, and one line per problem found in the folder."""

    store: RunStore
    report: dict[str, Any]
    counts: dict[str, dict[str, int]]
    problems: tuple[str, ...]
    n_ok: int  # replies imported (ok respond records) of
    n_total: int  # the selected samples' turns


def check_name(name: str) -> None:
    """An import's name labels its run in reports and names its folder.

    Raises:
        BadValue: not a plain name, or the name of a calibration row (``compare`` would take the
            run for one).
    """
    from stylebench.compare.calibrate import CALIBRATION

    if not NAME_RE.fullmatch(name or ""):
        raise BadValue(
            f"--name {name!r}: use letters, digits and . _ + - (at most 100, starting with a "
            "letter or digit)"
        )
    if name in CALIBRATION:
        raise BadValue(
            f"--name {name!r} is a calibration row's name; compare would take this run for it: "
            "choose another name"
        )


def imported_identity(name: str, folder: ReplyFolder, decode: DecodeConfig) -> Identity:
    """Who answered, as far as stylebench can know: the name, the declared meta, the files."""
    desc = {
        "name": name,
        "kind": IMPORTED,
        "meta": dict(folder.meta),
        "replies_sha256": folder.digest,
        "n_files": len(folder.files),
    }
    return Identity.of(desc, decode)


def manifest_model(identity: Identity, folder: ReplyFolder) -> dict[str, Any]:
    """The manifest's ``model``: the identity plus what is not part of it (where the files were,
    their listing) and the fields reports read (``history_kind``)."""
    meta = folder.meta
    entry: dict[str, Any] = {
        **identity.model,
        "imported_from": str(folder.root.resolve()),
        "files": dict(folder.files),
        "decode_effective": {"greedy": None, "args": None, "definition": DECODE_NOTE},
    }
    if isinstance(meta.get("model"), str):
        entry["made_by"] = meta["model"]  # the captioning self-check compares it
    if meta.get("history_kind"):
        entry["history_kind"] = meta["history_kind"]
        entry["history"] = "as declared in meta.json"
    return entry


def changed_files(manifest: Mapping[str, Any], folder: ReplyFolder) -> list[str]:
    """The reply and text files that differ from those a run folder was imported from."""
    old = (manifest.get("model") or {}).get("files")
    if not isinstance(old, dict):
        return []
    new = folder.files
    out = []
    for rel in sorted(set(old) | set(new)):
        if rel not in new:
            out.append(f"{rel} removed")
        elif rel not in old:
            out.append(f"{rel} added")
        elif old[rel] != new[rel]:
            out.append(f"{rel} changed (sha256 {str(old[rel])[:12]}... -> {new[rel][:12]}...)")
    return out


def _reason(exc: Exception, path: Path) -> str:
    return str(exc).removeprefix(f"{path}: ").removeprefix(f"{path.name}: ")


def reply_wav(path: Path, limits: ReplyLimits) -> tuple[bytes, int]:
    """The wav a run folder stores for a reply file, and its sample rate.

    A RIFF/WAVE file is taken byte for byte (its sha256 is the source's); flac and mp3 are
    decoded once into PCM wav (16 or 24 bit as the source, 24 bit for mp3).

    Raises:
        AudioError: the reply cannot be scored (see :func:`~stylebench.audio.load_audio`) or is
            longer than ``limits.max_seconds``.
    """
    import soundfile as sf

    # what a saved reply can get wrong, each with what to do about it
    if path.stat().st_size == 0:
        raise AudioError("empty file (0 bytes)")
    if why := wav_truncation(path):
        raise AudioError(f"truncated wav ({why}); save the reply again")
    try:
        info = sf.info(str(path))
    except Exception as exc:  # libsndfile raises several types for non-audio input
        raise AudioError(
            f"not audio stylebench can read ({type(exc).__name__}); save it as wav, flac or mp3"
        ) from None
    if not MIN_SR <= info.samplerate <= MAX_SR:
        raise AudioError(f"sample rate {info.samplerate} Hz is outside [{MIN_SR}, {MAX_SR}] Hz")
    check_length(info.duration, limits.max_seconds)  # before a long file is decoded
    load_audio(path)  # NaN, too short, silent
    if info.format in WAV_FORMATS:
        return path.read_bytes(), int(info.samplerate)
    subtype = info.subtype if info.subtype in PCM_SUBTYPES else "PCM_24"
    data, rate = sf.read(str(path), dtype=PCM_SUBTYPES.get(info.subtype, "float32"), always_2d=True)
    buf = io.BytesIO()
    sf.write(buf, data, rate, subtype=subtype, format="WAV")
    return buf.getvalue(), int(rate)


def reply_text(tf: TurnFiles, limits: ReplyLimits) -> str:
    """The turn's text channel (leading and trailing white space dropped), or ``""``.

    Raises:
        BadValue: not UTF-8, or longer than ``limits.max_chars``.
    """
    if tf.text is None:
        return ""
    try:
        text = tf.text.read_bytes().decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise BadValue(
            f"{tf.text_rel}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    except OSError as exc:
        raise BadValue(f"{tf.text_rel}: cannot be read ({exc.strerror or exc})") from None
    if len(text) > limits.max_chars:
        raise BadValue(
            f"{tf.text_rel}: {len(text)} characters, over the limit of {limits.max_chars} (--max-reply-chars)"
        )
    return text


class ImportStage:
    """The respond stage of an imported run: the same plan and fingerprints, replies read from
    the folder instead of asked of a model."""

    records: ClassVar[RecordKind[RespondRecord]] = RESPONSES
    name: ClassVar[str] = RESPONSES.name
    errors: ClassVar[tuple[type[BaseException], ...]] = ()
    unit: ClassVar[str] = "sample"

    def __init__(
        self,
        store: RunStore,
        samples: Sequence[Sample],
        set_root: Path,
        identity: Identity,
        folder: ReplyFolder,
        *,
        limits: ReplyLimits | None = None,
        strict: bool = False,
    ) -> None:
        self.store, self.samples, self.set_root = store, samples, set_root
        self.identity, self.folder, self.strict = identity, folder, strict
        self.limits = limits or ReplyLimits()

    def plan(self) -> list[Unit]:
        # the respond stage's own plan: a stored imported run reads back as any run does
        return RespondStage(self.store, self.samples, self.set_root, self.identity).plan()

    def compute(self, unit: Unit, done: Mapping[Key, RespondRecord]) -> Iterator[RespondRecord]:
        s: Sample = unit.payload
        prior: list[str] = []
        broken = False
        for k in s.turn_numbers:
            fp = turn_fp(self.identity, s, k, prior)
            rec = done.get((s.id, k))
            if not (is_ok(rec) and rec.fp == fp):
                rec = self._one(s, k, fp)
                yield rec
            # keyed as the respond stage keys them: a turn's key covers the ok turns before the
            # first that is not
            if not broken and rec.status == "ok":
                prior.append(rec.sha256)
            else:
                broken = True

    def _one(self, s: Sample, k: int, fp: str) -> RespondRecord:
        tf = self.folder.turns[(s.id, k)]
        try:
            if tf.problem:
                raise BadValue(tf.problem)
            assert tf.audio is not None
            text = reply_text(tf, self.limits)
            try:
                data, sr = reply_wav(tf.audio, self.limits)
            except AudioError as exc:
                raise BadValue(f"{tf.audio_rel}: {_reason(exc, tf.audio)}") from None
        except BadValue as exc:
            if self.strict:
                raise
            source = {"file": tf.audio_rel or None}
            return RespondRecord(s.id, k, "error", fp, error=str(exc), raw={"imported": source})
        dest = write_bytes(self.store.audio_path(s.id, k), data)
        sha = sha256_file(dest)
        source = {
            "file": tf.audio_rel,
            "sha256": self.folder.files.get(tf.audio_rel, ""),
            "text_file": tf.text_rel or None,
        }
        return RespondRecord(
            s.id,
            k,
            "ok",
            fp,
            text=text,
            audio=str(dest.relative_to(self.store.root)),
            sr=sr,
            sha256=sha,
            raw={"imported": source},
        )


def _problems(
    folder: ReplyFolder, samples: Sequence[Sample], records: Mapping[Key, RespondRecord]
) -> list[str]:
    """One line per problem: the folder's notes, then each error (a sample's shared one once)."""
    chosen = {s.id for s in samples}
    out = list(folder.notes)
    unselected = sorted(
        {sid for sid, _ in folder.turns if sid not in chosen and (folder.root / sid).is_dir()}
    )
    if unselected:
        shown = ", ".join(unselected[:5]) + (", ..." if len(unselected) > 5 else "")
        out.append(
            f"{len(unselected)} sample folders are of the set but not selected by --dim/--lang/"
            f"--limit; left out: {shown}"
        )
    for s in samples:
        errors = [
            r.error for k in s.turn_numbers if (r := records.get((s.id, k))) and r.status != "ok"
        ]
        out += list(dict.fromkeys(errors))
    return out


def import_replies(
    cfg: RunConfig, folder_path: Path | str, *, progress: bool = True
) -> ImportResult:
    """Import the replies under ``folder_path`` as a run named ``cfg.model`` of ``cfg``'s
    dialogue set and selection, then measure and score it as ``run`` does after respond.

    Raises:
        BadValue: a bad name or meta.json; no selected sample has a folder; the run folder holds
            another set or was imported from other files.
    """
    from stylebench.commands.manifest import (
        check_identity,
        dialogues_entry,
        read_run_manifest,
        write_manifest,
    )
    from stylebench.commands.reporting import extractor_names, report
    from stylebench.commands.runs import (
        judge_entry,
        load_dialogues,
        persistence_root,
        select_samples,
    )
    from stylebench.commands.scored import score_run
    from stylebench.executors.base import make_executor
    from stylebench.pipeline.stage import run_stage
    from stylebench.stages.registry import check_models
    from stylebench.stages.runner import measure

    check_name(cfg.model)
    if (proot := persistence_root(cfg)) is not None:  # both dialogues of every sample
        from stylebench.commands.persistence import (
            check_persistence_models,
            refuse_unread,
            select,
        )
        from stylebench.dialogues.persistence import arms_of, load_persistence_set

        refuse_unread(cfg)
        sel = select(cfg, proot)
        samples: list[Sample] = list(sel.arms)
        check_persistence_models(cfg, sel.arms, given=cfg.flat())
        set_root, checksum = proot, sel.checksum
        every, _ = load_persistence_set(proot, check_audio=False)
        samples_all: list[Sample] = [a for s in every for a in arms_of(s)]
    else:
        sel = None
        samples_all, set_root, checksum = load_dialogues(cfg)
        samples = select_samples(samples_all, cfg)
        check_models(cfg, samples, given=cfg.flat())
    folder = scan(folder_path, samples_all)
    if not any((folder.root / s.id).is_dir() for s in samples):
        raise BadValue(nothing_selected(folder.root, samples, samples_all, cfg))
    identity = imported_identity(cfg.model, folder, cfg.decode)
    prefix = "persist-" if sel is not None else ""
    store = RunStore(Path(cfg.out) / (cfg.run_id or prefix + cfg.default_run_id(checksum)))
    with store.lock("stylebench import-replies"), make_executor(cfg.executor) as executor:
        if store.exists():
            manifest = read_run_manifest(store)
            if manifest["dialogues"]["checksum"] != checksum:
                raise BadValue(
                    f"{store.root} holds a run of another dialogue set; pass a different "
                    "--run-id or --out"
                )
            if changed := changed_files(manifest, folder):
                raise BadValue(
                    f"{store.root} was imported from other files ({'; '.join(changed[:5])}"
                    + (f"; {len(changed) - 5} more" if len(changed) > 5 else "")
                    + "); changed replies are another run: pass another --run-id or --out"
                )
        check_identity(store, identity)
        write_manifest(
            store,
            cfg,
            identity,
            dialogues_entry(set_root, checksum, samples)
            if sel is None
            else {
                **dialogues_entry(set_root, checksum, samples),
                "protocol": "persistence",
                "n_selected": len(sel.samples),
            },
            model=manifest_model(identity, folder),
            judge=judge_entry(cfg),
            extractors=extractor_names(cfg),
            command="import-replies",
        )
        limits = ReplyLimits(cfg.max_reply_chars, cfg.max_reply_s)
        stage = ImportStage(
            store, samples, set_root, identity, folder, limits=limits, strict=cfg.strict
        )
        responded = run_stage(store, stage, strict=cfg.strict, progress=progress)
        if sel is None:
            measured = measure(
                store, samples, cfg, responded.records, progress=progress, executor=executor
            )
            scored = report(score_run(store, samples, cfg, measured))
        else:
            from stylebench.commands.persistence import PERSISTENCE_STAGES, score_and_report

            measured = measure(
                store,
                samples,
                cfg,
                responded.records,
                progress=progress,
                executor=executor,
                only=PERSISTENCE_STAGES,
            )
            scored = score_and_report(store, sel, cfg, measured.records, read_run_manifest(store))
        measured.counts["respond"] = responded.counts
        problems = _problems(folder, samples, responded.records)
        n_ok = sum(is_ok(r) for r in responded.records.values())
        return ImportResult(
            store,
            scored,
            measured.counts,
            tuple(problems),
            n_ok,
            sum(len(s.turn_numbers) for s in samples),
        )


def nothing_selected(root: Path, samples: list, samples_all: list, cfg: Any) -> str:
    """Why a replies folder matched no selected sample, naming the selection that was used
    (``--dim`` has a default: a folder of volume replies under ``--dim pitch`` selects nothing)."""
    limit = f" --limit {cfg.limit}" if cfg.limit else ""
    held = sorted({s.dim for s in samples_all if (root / s.id).is_dir()})
    langs = sorted({s.lang for s in samples_all if (root / s.id).is_dir()})
    where = (
        f"; the folder holds samples of --dim {','.join(held)} --lang {','.join(langs)}: pass those"
        if held
        else "; the folder holds no sample of this dialogue set (another set? check --dialogues)"
    )
    return (
        f"{root} holds no folder of any selected sample: the selection was --dim {cfg.dim} "
        f"--lang {cfg.lang}{limit} (flags not given take their defaults; expected "
        f"{root}/<sample_id>/turn1.wav, e.g. {samples[0].id}/turn1.wav){where}"
    )
