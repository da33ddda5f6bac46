"""Per-turn helpers of the repo-based wrappers: stored dialogue state, generators, and the
system prompts that live in the user's checkout.

Kept apart from :mod:`.upstream` (requirements, revisions, the manifest entry); the helpers
every wrapper shares (reply wavs, dialogue pairs) are in :mod:`stylebench.model_wrappers.common`.
Nothing heavy is imported here.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from stylebench.audio import sha256_file
from stylebench.model_wrappers.repo.upstream import RepoSpec
from stylebench.registry import MissingExtraError


def has_han(text: str) -> bool:
    """Whether ``text`` holds a CJK ideograph (used to pick a zh speaker prompt)."""
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def drain(gen: Iterator[Any]) -> tuple[list[Any], Any]:
    """Run a generator to the end: the items it yielded and the value it returned."""
    items = []
    while True:
        try:
            items.append(next(gen))
        except StopIteration as stop:
            return items, stop.value


@contextmanager
def audio_sampling_kept(
    owner: Any, attr: str, is_audio: Callable[[Any], bool], audio: Mapping[str, Any]
) -> Iterator[None]:
    """While the block runs, ``owner.attr`` (the official sampler) draws audio tokens with
    ``audio`` over the keyword arguments it is given; text tokens keep them unchanged.

    For models whose official code passes one set of settings to the text and the audio layers
    alike (litgpt's ``sample`` in mini-omni/mini-omni2, ``sample_next_token`` in SLAM-Omni): the
    run's settings reach the text stream only, the audio layers keep the model's own.
    ``is_audio(logits)`` tells the two apart (by the logits' width: the vocabularies differ).
    """
    original = getattr(owner, attr)
    own = attr in vars(owner)  # a module global, or an instance's own attribute

    def routed(logits: Any, *args: Any, **kwargs: Any) -> Any:
        if is_audio(logits):
            kwargs = {**kwargs, **audio}
        return original(logits, *args, **kwargs)

    setattr(owner, attr, routed)
    try:
        yield
    finally:
        if own:
            setattr(owner, attr, original)
        else:
            delattr(owner, attr)  # the class's method shows through again


def constant_str(node: ast.AST | None) -> str | None:
    """The value of a string constant node (adjacent literals are already joined), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def prompt_in_checkout(
    repo: Path | None,
    source: str,
    pick: Callable[[ast.AST], str | None],
    *,
    spec: RepoSpec,
    what: str,
    alternative: str = "",
) -> str:
    """The one string constant ``pick`` selects in ``repo/source``, read without running it.

    Some models need the exact system prompt they were trained with; it lives inside the
    official demo script (not an importable constant), so it is read from the user's checkout
    at run time rather than copied into stylebench.

    Args:
        repo: the checkout (``--model-arg repo=``); None raises the one-line hint.
        source: the script's path inside the checkout, e.g. ``"web_demo.py"``.
        pick: returns the wanted string for the AST node that holds it, else None.
        spec: the model's spec, for messages.
        what: what the string is, for messages ("system prompt").
        alternative: another way to give it, appended to the hint (``system_prompt=...``).

    Raises:
        MissingExtraError: no checkout, or the script is not in it.
        ValueError: the script holds no such string, or more than one.
    """
    checkout = "/path/to/" + spec.repo_url.rstrip("/").rsplit("/", 1)[-1]
    other = f" (or --model-arg {alternative})" if alternative else ""
    if repo is None:
        raise MissingExtraError(
            f"{spec.name} reads its {what} from the official {source}: "
            f"pass --model-arg repo={checkout}{other}"
        )
    path = repo / source
    if not path.is_file():
        raise MissingExtraError(f"{path} not found: pass --model-arg repo={checkout}")
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = [s for node in ast.walk(tree) if (s := pick(node)) is not None]
    if len(found) != 1:
        raise ValueError(
            f"expected one {what} in {path}, found {len(found)}: is this the official "
            f"{spec.name} checkout?"
        )
    return found[0]


class StateCache:
    """Dialogue state kept in memory between turns, keyed by the sha256 of the last reply wav.

    For models whose official multi-turn path keeps internal state (a KV cache) rather than
    re-reading earlier turns. The runner copies each reply byte for byte, so the reply's sha256
    names the state it ended in. Only the most recent ``size`` states are kept (GPU memory).
    """

    def __init__(self, size: int = 2) -> None:
        self.size = size
        self._states: dict[str, Any] = {}

    def put(self, reply_wav: Path | str, state: Any) -> None:
        self._states[sha256_file(reply_wav)] = state
        while len(self._states) > self.size:
            self._states.pop(next(iter(self._states)))

    def get(self, reply_wav: str) -> Any | None:
        return self._states.get(sha256_file(reply_wav))


def join_waves(waves: Sequence[Any], overlap: int) -> Any:
    """Join ``[1, n]`` waves as the demo's ``decode_save_concat`` does (web_demo/generation.py,
    lines 555-561): between two pieces both longer than ``overlap`` it inserts a linear
    crossfade of the first one's last and the second one's first ``overlap`` samples."""
    import torch

    out = [waves[0]]
    for w in waves[1:]:
        prev = out[-1]
        if prev.shape[1] > overlap and w.shape[1] > overlap:
            down = torch.linspace(1.0, 0.0, overlap, device=prev.device)[None, :]
            out.append(prev[:, -overlap:] * down + w[:, :overlap] * down.flip(-1))
        out.append(w)
    return torch.cat(out, dim=1)
