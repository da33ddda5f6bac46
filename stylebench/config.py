"""The run configuration: frozen sub-configs, one merge, CLI flags from field metadata.

Precedence: command-line flags > config file (``--config run.toml`` or ``.json``) > a stored run's
config > defaults. The resolved config is written, nested by section, into ``manifest.json``.
Every option is declared once, here, with :func:`option`; :mod:`stylebench.cli.common` builds the
command-line flags from that metadata. Field names are unique across sections, so a flat mapping
``{name: value}`` (CLI values, config files, manifests written before sections existed) places
each value without ambiguity. Only secrets come from the environment, never through this module.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from stylebench.caption_config import CaptionConfig
from stylebench.errors import BadValue
from stylebench.executors.config import ExecutorConfig
from stylebench.metrics.dims.base import all_dims, in_order
from stylebench.options import check_choice as _check_choice
from stylebench.options import check_choices as _check_choices
from stylebench.options import check_min as _check_min
from stylebench.options import option
from stylebench.paths import named_file
from stylebench.records import ACOUSTIC_DIMS, DIMS, LANGS, DecodeConfig

RUN = ("run",)
MEASURE = ("run", "score")


@dataclass(frozen=True)
class MeasureConfig:
    """How replies are transcribed and measured (stages transcribe and features)."""

    asr: str = option("faster-whisper", "ASR backend: faster-whisper, openai-whisper, none")
    asr_model: str = option(
        "base", "ASR model: base (offline default), tiny.en, large-v3, or a path"
    )
    vad: str = option("silero", "speech-span detector", choices=("silero", "energy"))
    pitch_stat: str = option(
        "agreed_mean",
        "F0 statistic that is the pitch score",
        choices=("agreed_mean", "weighted_mean", "guarded_mean", "mean", "median"),
    )
    speed_source: str = option(
        "auto",
        "speed estimate: auto (ASR, or the text channel when the ASR is unreliable), asr, text, nuclei",
        choices=("auto", "asr", "text", "nuclei"),
    )
    transcript_max_error: float = option(
        0.3,
        "largest WER (en) / CER (zh) of a transcript against the model's text channel at which it is trusted for speed and judging",
        metavar="RATE",
    )
    f0_floor: float = option(50.0, "lowest F0 searched, Hz")
    f0_ceil: float = option(1100.0, "highest F0 searched, Hz")
    quality: bool = option(
        True,
        "DNSMOS P.835 speech quality (SIG, BAK, OVRL) of every reply, a measured value beside the "
        "style scores (needs speechmos, the [voice] extra; left out with a note without it)",
    )
    loudness: bool = option(
        False,
        "integrated loudness (ITU-R BS.1770-4, LUFS) of every reply, a perceptual cross-check of "
        "the volume score shown beside it",
    )

    def __post_init__(self) -> None:
        _check_choices(self)
        _check_min(self, ("transcript_max_error",))
        if not 0 < self.f0_floor < self.f0_ceil:
            raise BadValue(f"need 0 < --f0-floor < --f0-ceil, got {self.f0_floor}, {self.f0_ceil}")


def _score_post_init(self: Any) -> None:
    _check_min(self, tuple(d.threshold_field for d in all_dims()))
    _check_min(self, ("n_boot",), 1)
    q = self.min_quality
    ok = isinstance(q, (int, float)) and not isinstance(q, bool) and 1.0 <= q <= 5.0
    if q is not None and not ok:
        raise BadValue(
            f"--min-quality is a DNSMOS OVRL score between 1 and 5 (e.g. 2.5), got {q!r}"
        )


if TYPE_CHECKING:

    class ScoreConfig:
        """What a type checker reads for the class built below (tests/test_typing.py checks the
        fields against it), frozen; an extension dimension's threshold reads as a float."""

        __dataclass_fields__: ClassVar[dict[str, Any]]

        def __getattr__(self, name: str) -> float: ...

        @property
        def speed_pct(self) -> float: ...
        @property
        def volume_db(self) -> float: ...
        @property
        def pitch_st(self) -> float: ...
        @property
        def emotion_delta(self) -> float: ...
        @property
        def n_boot(self) -> int: ...
        @property
        def min_quality(self) -> float | None: ...

        def __init__(
            self,
            *,
            speed_pct: float = ...,
            volume_db: float = ...,
            pitch_st: float = ...,
            emotion_delta: float = ...,
            n_boot: int = ...,
            min_quality: float | None = ...,
            **extensions: float,
        ) -> None: ...

else:
    #: Just-noticeable thresholds and confidence intervals (stage score): one field per dimension,
    #: named, defaulted and explained by its :class:`~stylebench.metrics.dims.base.Dimension`
    ScoreConfig = dataclasses.make_dataclass(
        "ScoreConfig",
        [
            (d.threshold_field, float, option(d.default_threshold, d.threshold_help))
            for d in in_order()
        ]
        + [("n_boot", int, option(2000, "bootstrap resamples for CIs"))]
        + [
            (
                "min_quality",
                float | None,
                option(
                    None,
                    "leave replies whose DNSMOS OVRL is under this (1-5) unscored on every dimension "
                    "(reason low_quality); no gate by default",
                    metavar="OVRL",
                    kind="number",
                ),
            )
        ],
        namespace={
            "__post_init__": _score_post_init,
            "__doc__": "Just-noticeable thresholds and confidence intervals (stage score).",
            "__module__": __name__,
        },
        frozen=True,
    )


@dataclass(frozen=True)
class JudgeConfig:
    """The relevance judge and gate (stages judge and score)."""

    judge: str = option("offline", "relevance judge: offline, openai, transformers, vllm or none")
    judge_model: str | None = option(None, "judge model: hub id, local path or served model name")
    judge_url: str | None = option(
        None, "OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1"
    )
    judge_input: str = option(
        "auto",
        "what the judge reads: ASR transcripts, the models' text channel, or auto (transcripts unless they disagree with the text channel)",
        choices=("auto", "transcript", "text"),
    )
    judge_prompt: str | None = option(None, "folder with your srd.txt and mrd.txt", metavar="DIR")
    judge_prompt_srd: str | None = option(None, "your SRD prompt file", metavar="PATH")
    judge_prompt_mrd: str | None = option(None, "your MRD prompt file", metavar="PATH")
    judge_args: dict[str, str] = option(
        {}, "judge backend option, e.g. concurrency=4 (repeatable)", flag="--judge-arg", kind="kv"
    )
    judge_cache: bool = option(True, "reuse cached verdicts (cache root judge_cache.sqlite)")
    mrd_threshold: float = option(40.0, "eligible when MRD > this percent")
    filter_mrd: bool = option(
        False, "also leave samples whose MRD verdict is not relevant out of style scores"
    )

    def __post_init__(self) -> None:
        _check_choices(self)
        if not 0.0 <= self.mrd_threshold <= 100.0:
            raise BadValue(f"--mrd-threshold is a percent in [0, 100], got {self.mrd_threshold}")


@dataclass(frozen=True)
class EmotionConfig:
    """Automatic emotion probe (stage probe)."""

    emotion_probe: str = option(
        "none",
        "automatic emotion probe (needs the [emotion] extra)",
        choices=("none", "emotion2vec"),
    )
    probe_model: str = option("iic/emotion2vec_plus_large", "probe hub id or folder")
    probe_delta: float = option(0.05, "probe probability threshold")

    def __post_init__(self) -> None:
        _check_choices(self)
        _check_min(self, ("probe_delta",))


SECTIONS: dict[str, type] = {
    "decode": DecodeConfig,
    "measure": MeasureConfig,
    "score": ScoreConfig,
    "judge": JudgeConfig,
    "emotion": EmotionConfig,
    "caption": CaptionConfig,
    "executor": ExecutorConfig,  # where work runs (stylebench/executors/config.py)
}


@dataclass(frozen=True)
class RunConfig:
    """One run: which model on which samples, and the settings of every stage."""

    model: str = option("reference", "model name (see `stylebench models`)", commands=RUN)
    model_args: dict[str, str] = option(
        {},
        "argument for the model wrapper, e.g. path=/weights (repeatable)",
        commands=RUN,
        flag="--model-arg",
        kind="kv",
    )
    dim: str = option(
        "pitch",
        ", ".join(DIMS) + ", or all (" + ", ".join(ACOUSTIC_DIMS) + ")",
        commands=RUN,
    )
    lang: str = option("all", "en, zh or all", commands=RUN)
    limit: int | None = option(
        None, "at most N samples per (dim, direction, lang) cell", commands=RUN
    )
    dialogues: str = option(
        "default", "dialogue set folder (default: the built-in set)", commands=RUN
    )
    out: str = option("runs", "parent folder of run folders", commands=RUN)
    run_id: str | None = option(
        None, "run folder name (default: model-dim-lang-setchecksum)", commands=RUN
    )
    worker_python: str | None = option(
        None,
        "run the model in that environment's interpreter as a worker (docs/models.md#worker)",
        commands=RUN,
        metavar="PYTHON",
    )
    turn_timeout_s: float = option(
        600.0, "with --worker-python: seconds per turn before the worker is restarted", commands=RUN
    )
    max_reply_chars: int = option(
        20000, "a reply whose text channel is longer is an error record", commands=RUN
    )
    max_reply_s: float = option(
        120.0,
        "a reply whose audio is longer is an error record (this bounds what one reply costs the transcribe and features stages)",
        commands=RUN,
    )
    strict: bool = option(False, "stop at the first error")
    decode: DecodeConfig = field(default_factory=DecodeConfig)
    measure: MeasureConfig = field(default_factory=MeasureConfig)
    score: ScoreConfig = field(default_factory=ScoreConfig)
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    emotion: EmotionConfig = field(default_factory=EmotionConfig)
    caption: CaptionConfig = field(default_factory=CaptionConfig)
    executor: ExecutorConfig = field(default_factory=ExecutorConfig)

    def __post_init__(self) -> None:
        _check_choice(self.dim, "dim", (*DIMS, "all"))
        _check_choice(self.lang, "lang", (*LANGS, "all"))
        if self.limit is not None and (isinstance(self.limit, bool) or self.limit < 1):
            raise BadValue("--limit must be a positive number of samples per cell")
        _check_min(self, ("turn_timeout_s", "max_reply_s"), 1e-9)
        _check_min(self, ("max_reply_chars",), 1)
        _check_min(self.decode, ("temperature",))  # 0 is greedy; below it no sampler means anything
        _check_min(self.decode, ("max_new_tokens",), 1)
        if not (isinstance(self.decode.top_p, (int, float)) and 0 < self.decode.top_p <= 1):
            raise BadValue(f"--top-p must be in (0, 1], got {self.decode.top_p!r}")

    @property
    def dims(self) -> tuple[str, ...]:
        return ACOUSTIC_DIMS if self.dim == "all" else (self.dim,)

    @property
    def langs(self) -> tuple[str, ...]:
        return LANGS if self.lang == "all" else (self.lang,)

    def default_run_id(self, set_checksum: str) -> str:
        lim = f"-n{self.limit}" if self.limit else ""
        return f"{self.model}-{self.dim}-{self.lang}{lim}-{set_checksum[:8]}"

    def to_dict(self) -> dict[str, Any]:
        """Nested by section, as written into the manifest."""
        return dataclasses.asdict(self)

    def flat(self) -> dict[str, Any]:
        """Every option by its (unique) field name, sections flattened."""
        out = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in SECTIONS
        }
        for name in SECTIONS:
            out.update(dataclasses.asdict(getattr(self, name)))
        return out


def section_of() -> dict[str, str | None]:
    """Field name -> section name (``None`` for top-level run fields)."""
    out: dict[str, str | None] = {
        f.name: None for f in dataclasses.fields(RunConfig) if f.name not in SECTIONS
    }
    for section, cls in SECTIONS.items():
        for f in dataclasses.fields(cls):
            out[f.name] = section
    return out


def _fields_by_name() -> dict[str, dataclasses.Field]:
    out = {f.name: f for f in dataclasses.fields(RunConfig) if f.name not in SECTIONS}
    for cls in SECTIONS.values():
        out.update({f.name: f for f in dataclasses.fields(cls)})
    return out


def flag_of(name: str) -> str:
    """The command-line flag of setting ``name`` (``judge_args`` -> ``--judge-arg``)."""
    f = _fields_by_name()[name]
    return str(f.metadata.get("flag", "--" + name.replace("_", "-")))


class Ignored(NamedTuple):
    """Settings that a command would ignore with the config it has, for :func:`refuse_ignored`."""

    names: tuple[str, ...]
    #: what would ignore them, as the message says it (``"--judge none (no relevance judge runs)"``)
    where: str
    #: what to do besides dropping them (``"pick a judge with --judge"``)
    fix: str | None = None


def refuse_ignored(
    values: Mapping[str, Any], ignored: Iterable[str], where: str, *, fix: str | None = None
) -> None:
    """Refuse the settings that ``where`` would ignore: each of ``ignored`` that ``values`` (by
    field name: the user's flags, or a whole resolved config) sets to other than its default.
    The one check behind every "this flag does nothing here" (a persistence run's stages, the
    settings ``stylebench measure`` and ``pairs`` cannot use, the options of a stage that does
    not run: :func:`stylebench.stages.registry.check_models`).

    Args:
        fix: what else the user can do instead of dropping them (``"pick one with --captioner"``).

    Raises:
        BadValue: naming the flags, where they would do nothing, and what to do.
    """
    defaults = RunConfig().flat()
    given = [n for n in ignored if values.get(n) is not None and values.get(n) != defaults.get(n)]
    if given:
        # an on/off setting turned off is typed --no-...
        flags = ", ".join(
            "--no-" + flag_of(n)[2:] if values.get(n) is False else flag_of(n) for n in given
        )
        raise BadValue(
            f"{flags}: {where} would ignore {'them' if len(given) > 1 else 'it'}; drop {flags}"
            + (f" or {fix}" if fix else "")
        )


def from_flat(values: dict[str, Any]) -> RunConfig:
    """Build a :class:`RunConfig` from ``{field: value}``; sections given as dicts also work.

    Raises:
        ValueError: an unknown key, with the known ones listed.
    """
    where = section_of()
    top: dict[str, Any] = {}
    parts: dict[str, dict[str, Any]] = {name: {} for name in SECTIONS}
    for key, value in values.items():
        if key in SECTIONS and isinstance(value, dict):
            for k, v in value.items():
                if where.get(k) != key:
                    raise BadValue(
                        f"unknown setting {key}.{k}; known: {sorted(n for n, s in where.items() if s == key)}"
                    )
                parts[key][k] = v
        elif key not in where:
            raise BadValue(f"unknown setting {key!r}; known settings: {sorted(where)}")
        elif where[key] is None:
            top[key] = value
        else:
            parts[where[key]][key] = value
    for part in (top, *parts.values()):
        for k, v in part.items():
            _check_type(k, v)
    sections = {name: cls(**parts[name]) for name, cls in SECTIONS.items()}
    return RunConfig(**top, **sections)


_KINDS: dict[str, tuple[type, ...]] = {
    "int": (int,),
    "float": (int, float),
    "str": (str,),
    "bool": (bool,),
    "dict": (dict,),
    "tuple": (tuple, list),
}


def _field_types() -> dict[str, str]:
    """Field name -> its annotation as written (``"int | None"``)."""
    return {name: str(f.type) for name, f in _fields_by_name().items()}


def _check_type(key: str, value: Any) -> None:
    """A setting of a plain type (int, float, str, bool, dict, tuple) with a value of another.

    A config file's ``limit = "one"`` is named here, not later as a comparison's ``TypeError``.
    Annotations other than these plain types are left to the section's own checks.
    """
    ann = _field_types().get(key)
    if ann is None:
        return
    parts = [a.strip().split("[")[0] for a in ann.split("|")]
    if value is None and "None" in parts:
        return
    kinds = [_KINDS.get(a) for a in parts if a != "None"]
    if not kinds or any(k is None for k in kinds):
        return
    ok = any(
        isinstance(value, k) and (k == (bool,) or not isinstance(value, bool))
        for k in kinds
        if k is not None
    )
    if not ok:
        raise BadValue(f"setting {key!r} must be {ann}, not {type(value).__name__} {value!r}")


def make_config(**values: Any) -> RunConfig:
    """``make_config(model="neutral", asr="none")``: a config from flat field names."""
    return from_flat(values)


def read_config_file(path: Path | str) -> dict[str, Any]:
    """Read a TOML or JSON config file: flat ``key = value`` or ``[section]`` tables."""
    p = named_file(path, "config file")
    if p.suffix not in (".toml", ".json"):
        raise BadValue(f"config file {p} must be .toml or .json")
    try:
        text = p.read_text(encoding="utf-8")
        if p.suffix == ".toml":
            import tomllib

            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except (ValueError, OSError) as exc:  # TOMLDecodeError, JSONDecodeError, UnicodeDecodeError
        raise BadValue(f"config file {p} is not valid {p.suffix[1:].upper()}: {exc}") from None
    if not isinstance(data, dict):
        raise BadValue(f"config file {p} must hold a table of settings, not {type(data).__name__}")
    try:
        from_flat(data)  # unknown keys fail here, naming the file
    except ValueError as exc:
        raise BadValue(f"config file {p}: {exc}") from None
    return data


def flatten(values: dict[str, Any]) -> dict[str, Any]:
    """Sections (``{"judge": {...}}``) merged into one ``{field: value}`` mapping."""
    out: dict[str, Any] = {}
    for k, v in values.items():
        if k in SECTIONS and isinstance(v, dict):
            out.update(v)
        else:
            out[k] = v
    return out


def resolve_config(
    cli: dict[str, Any], config_file: Path | str | None = None, base: dict[str, Any] | None = None
) -> RunConfig:
    """Merge ``base`` (e.g. a run's stored config) < config file < CLI values that are not None.

    Keys of ``base`` this version no longer knows (a manifest from an older version) are dropped;
    unknown keys from the user (config file, CLI) are errors.
    """
    known = section_of()
    merged = {k: v for k, v in flatten(base or {}).items() if k in known}
    if config_file:
        merged.update(flatten(read_config_file(config_file)))
    merged.update({k: v for k, v in flatten(cli).items() if v is not None})
    return from_flat(merged)


def parse_model_args(items: list[str] | None) -> dict[str, str]:
    """``["path=/w", "dtype=bf16"]`` -> dict; a malformed item raises ValueError."""
    out: dict[str, str] = {}
    for item in items or []:
        if "=" not in item:
            raise BadValue(f"expected KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        if not k.strip().isidentifier():
            raise BadValue(
                f"--model-arg {item!r}: the name before '=' must be an argument name such as path"
            )
        out[k.strip()] = v.strip()
    return out
