"""The report's optional sections, in the order ``report.md`` shows them after the cell tables.

Each is one module with a Markdown renderer; :data:`SECTIONS` is the one list the renderer
(:func:`stylebench.report.render_md.to_markdown`) walks. A section is shown when its block is in
the report (``key``; ``None``: the section reads the whole report and decides itself), and its
renderer gets that block (or, with ``whole``, the report). Adding a section is its module and one line here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Section:
    """One optional report section."""

    #: the report's block it renders; ``None``: it is given the whole report
    key: str | None
    #: ``module:function`` of its renderer, imported when the report is rendered
    render: str
    #: shown whenever the key is present (else: when its block is not empty)
    when_present: bool = False
    #: its renderer reads the whole report, not only its block
    whole: bool = False

    def markdown(self, report: Mapping[str, Any]) -> list[str]:
        import importlib

        if self.key is not None:
            shown = self.key in report if self.when_present else bool(report.get(self.key))
            if not shown:
                return []
        module, _, name = self.render.partition(":")
        fn: Callable[[Any], list[str]] = getattr(importlib.import_module(module), name)
        return fn(report if self.key is None or self.whole else report[self.key])


_S = "stylebench.report.sections."
#: in the order they appear; ``timings`` last (``report --timings`` only, never in the files)
SECTIONS: tuple[Section, ...] = (
    Section(None, _S + "unscored:unscored_markdown"),  # why pairs have no score, if any
    Section("quality", _S + "quality:quality_markdown"),  # DNSMOS per turn, change from turn 1
    Section("judge", _S + "relevance:relevance_markdown", when_present=True, whole=True),  # gate
    Section("human", _S + "human:human_markdown"),  # imported listening-test ratings
    Section("emotion_scores", _S + "emotion:emotion_markdown"),  # which emotion scores are which
    Section("captions", _S + "captions:captions_markdown"),  # the captioning probe
    Section(None, _S + "notes:notes_markdown"),
    Section("timings", _S + "timings:timings_markdown", when_present=True),
)
