"""Prompts of the LLM judges and strict parsing of their replies.

LLM judges (``openai``, ``transformers``, ``vllm``) are asked with our own versioned prompt files
(``prompts/srd_v1.txt``, ``prompts/mrd_v1.txt`` beside this module) or a user's own. Transcripts
are untrusted: they are serialised as one JSON document (quotes, backslashes, control characters
and ``<``/``>`` escaped) and fenced between two marker lines that embed a hash of that document,
so no transcript can close the fence or add a line of its own to the prompt. The judge must
answer with exactly one JSON object ``{"label": "relevant"|"irrelevant", "reason": "..."}``;
anything else is ``unparseable``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from stylebench.errors import MissingFile
from stylebench.metrics.judges.base import JudgeRequest, Verdict
from stylebench.paths import named_file

PROMPT_VERSION = "v1"
LANGUAGE_NAMES = {"en": "English", "zh": "Mandarin Chinese"}
#: placeholders a prompt template must hold exactly once, in this order
REQUIRED_SLOTS = ("fence_begin", "data", "fence_end")
_SLOT = re.compile(r"\{\{(\w+)\}\}")
_SLOTS = {*REQUIRED_SLOTS, "language"}


@dataclass(frozen=True)
class ChatMessage:
    role: Literal["system", "user"]
    content: str


@dataclass(frozen=True)
class Prompt:
    """One prompt template.

    The file holds an optional ``[system]`` section and a ``[user]`` section (a line holding only
    the section name starts it); a file without section lines is all user text. Placeholders are
    ``{{fence_begin}}``, ``{{data}}``, ``{{fence_end}}`` (each exactly once, in this order, in the
    user text) and ``{{language}}`` (optional).

    Attributes:
        kind: ``srd`` or ``mrd``.
        name: file name, e.g. ``srd_v1.txt``.
        system: system-message template ("" for none).
        user: user-message template.
        sha256: hash of the file's bytes (recorded in manifests and cache keys).
        source: ``builtin:<name>`` or the file's path.
    """

    kind: str
    name: str
    system: str
    user: str
    sha256: str
    source: str


@dataclass(frozen=True)
class PromptSet:
    srd: Prompt
    mrd: Prompt

    def for_kind(self, kind: str) -> Prompt:
        return self.srd if kind == "srd" else self.mrd

    def describe(self) -> dict[str, dict[str, str]]:
        return {
            p.kind: {"name": p.name, "sha256": p.sha256, "source": p.source}
            for p in (self.srd, self.mrd)
        }


def parse_prompt(
    text: str, kind: str, name: str, source: str, *, slots: tuple[str, ...] = ()
) -> Prompt:
    """Split a prompt file into system and user templates and check its placeholders.

    Raises:
        ValueError: unknown placeholder, or the fence/data placeholders missing, repeated, out
            of order, or outside the user section.
    """
    sections: dict[str, list[str]] = {}
    current = "user"
    for line in text.splitlines():
        if line.strip() in ("[system]", "[user]"):
            current = line.strip()[1:-1]
            if current in sections:
                raise ValueError(f"prompt {source}: section [{current}] appears twice")
            sections[current] = []
            continue
        sections.setdefault(current, []).append(line)
    system = "\n".join(sections.get("system", [])).strip()
    user = "\n".join(sections.get("user", [])).strip()
    allowed = _SLOTS | set(slots)  # slots: what other prompts (the caption judge's) fill in
    unknown = sorted({m for m in _SLOT.findall(system + user)} - allowed)
    if unknown:
        raise ValueError(
            f"prompt {source}: unknown placeholders {unknown}; allowed: {sorted(allowed)}"
        )
    if set(_SLOT.findall(system)) & set(REQUIRED_SLOTS):
        raise ValueError(
            f"prompt {source}: {{{{data}}}} and the fences belong in the [user] section"
        )
    found = [m for m in _SLOT.findall(user) if m in REQUIRED_SLOTS]
    if found != list(REQUIRED_SLOTS):
        raise ValueError(
            f"prompt {source}: the user text must hold {{{{fence_begin}}}}, {{{{data}}}} and "
            f"{{{{fence_end}}}} once each, in that order (found {found}); the transcripts go there"
        )
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Prompt(kind, name, system, user, sha, source)


def load_prompts(
    folder: str | Path | None = None,
    *,
    srd: str | Path | None = None,
    mrd: str | Path | None = None,
) -> PromptSet:
    """The SRD and MRD prompts: ours (``prompts/<kind>_v1.txt``), or a user's.

    Args:
        folder: a folder holding ``srd.txt`` and ``mrd.txt`` (``--judge-prompt DIR``).
        srd: a file for the SRD prompt (``--judge-prompt-srd``); wins over ``folder``.
        mrd: a file for the MRD prompt (``--judge-prompt-mrd``); wins over ``folder``.

    Raises:
        FileNotFoundError: a named folder or file does not exist.
        ValueError: a prompt file is malformed (see :func:`parse_prompt`).
    """
    out = {}
    for kind, path in (("srd", srd), ("mrd", mrd)):
        if path is None and folder is not None:
            path = Path(folder) / f"{kind}.txt"
            if not Path(folder).is_dir():
                raise MissingFile(f"--judge-prompt {folder}: no such folder")
        if path is None:
            name = f"{kind}_{PROMPT_VERSION}.txt"
            builtin = resources.files("stylebench.metrics.judges").joinpath("prompts", name)
            text = builtin.read_text("utf-8")
            out[kind] = parse_prompt(text, kind, name, f"builtin:{name}")
            continue
        p = named_file(path, f"judge prompt file ({kind})")
        out[kind] = parse_prompt(p.read_text(encoding="utf-8"), kind, p.name, str(p))
    return PromptSet(out["srd"], out["mrd"])


def fence_json(obj: Any, label: str) -> tuple[str, str, str]:
    """``(begin marker, data, end marker)`` for untrusted data ``obj`` (any JSON value).

    ``data`` is one line of JSON with ``<``, ``>``, ``&`` and the Unicode line/paragraph
    separators escaped as ``\\uXXXX`` on top of JSON's own escaping: it holds no line break and
    no angle bracket, so it cannot contain or forge a marker. The markers carry a hash of the data.
    """
    data = json.dumps(obj, ensure_ascii=False)
    for ch in "<>&\u2028\u2029\x85":
        data = data.replace(ch, f"\\u{ord(ch):04x}")
    key = hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]
    return f"<<<{label} {key}>>>", data, f"<<<END {label} {key}>>>"


def fence_data(req: JudgeRequest) -> tuple[str, str, str]:
    """:func:`fence_json` of ``{"turns": [{"turn": k, "user": ..., "assistant": ...}]}``, each
    turn with a ``"note"`` when the request carries one for it (e.g. the reply was heard in
    another language)."""
    notes = req.notes or ("",) * len(req.turns)
    turns = [
        {"turn": k, "user": u, "assistant": a, **({"note": n} if n else {})}
        for k, ((u, a), n) in enumerate(zip(req.turns, notes, strict=True), 1)
    ]
    return fence_json({"turns": turns}, "CONVERSATION")


def fill(prompt: Prompt, values: dict[str, str]) -> tuple[ChatMessage, ...]:
    """The prompt's messages with ``values`` filled in (one pass: inserted text is never re-read)."""

    def sub(template: str) -> str:
        return _SLOT.sub(lambda m: values[m.group(1)], template)

    msgs = [ChatMessage("system", sub(prompt.system))] if prompt.system else []
    return (*msgs, ChatMessage("user", sub(prompt.user)))


def render(prompt: Prompt, req: JudgeRequest) -> tuple[ChatMessage, ...]:
    """Fill a prompt for one request (one substitution pass: inserted text is never re-read)."""
    begin, data, end = fence_data(req)
    language = LANGUAGE_NAMES.get(req.lang, req.lang)
    return fill(
        prompt, {"fence_begin": begin, "data": data, "fence_end": end, "language": language}
    )


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError(f"duplicate keys {sorted(k for k in set(keys) if keys.count(k) > 1)}")
    return dict(pairs)


def parse_verdict(text: str | None) -> Verdict:
    """Parse a judge's reply strictly.

    The reply, stripped of surrounding whitespace, must be exactly one JSON object with the keys
    ``label`` (``"relevant"`` or ``"irrelevant"``, lower case) and ``reason`` (a string), and no
    other or repeated key. Anything else (empty text, prose around the JSON, a Markdown code
    fence, another label) gives ``Verdict("unparseable")`` with the cause in ``reason``.
    """
    raw = text or ""
    obj, why = strict_object(raw, ("label", "reason"))
    if obj is None:
        return Verdict("unparseable", reason=why, raw=raw)
    if obj["label"] not in ("relevant", "irrelevant"):
        return Verdict(
            "unparseable",
            reason=f"label must be 'relevant' or 'irrelevant', got {str(obj['label'])[:40]!r}",
            raw=raw,
        )
    if not isinstance(obj["reason"], str):
        return Verdict("unparseable", reason="reason must be a string", raw=raw)
    return Verdict(obj["label"], reason=obj["reason"][:500], raw=raw)


def strict_object(text: str | None, keys: tuple[str, ...]) -> tuple[dict[str, Any] | None, str]:
    """``(object, "")`` when ``text``, stripped, is exactly one JSON object with exactly ``keys``
    (none repeated); else ``(None, why)``. Prose around it or a Markdown fence is a failure."""
    s = (text or "").strip()
    if not s:
        return None, "empty reply"
    try:
        obj = json.loads(s, object_pairs_hook=_no_duplicates)
    except ValueError as exc:
        return None, f"not one JSON object: {str(exc)[:120]}"
    if not isinstance(obj, dict):
        return None, f"JSON {type(obj).__name__}, not an object"
    if set(obj) != set(keys):
        return None, f"keys must be exactly {' and '.join(keys)}, got {sorted(obj)}"
    return obj, ""
