"""The report's optional sections, shown by ``report.md`` after the cell tables in the order of
their places (``at``).

Each is one module with a Markdown renderer. :data:`SECTIONS` are the report's own; a stage
declares its own beside its records (``StageReport.sections`` in
:mod:`stylebench.stages.registry`), and the renderer (:func:`stylebench.report.render_md.to_markdown`)
is handed both, merged by place. A section is shown when its block is in the report (``key``;
``None``: the section reads the whole report and decides itself), and its renderer gets that
block (or, with ``whole``, the report).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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
    #: its place among the sections (smaller first; ties keep the order given)
    at: int = 1000

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
#: the report's own sections (the stages' sit between them: quality at 20, the relevance gate at
#: 30, captions at 60); ``timings`` last (``report --timings`` only, never in the files)
SECTIONS: tuple[Section, ...] = (
    Section(None, _S + "unscored:unscored_markdown", at=10),  # why pairs have no score, if any
    Section("human", _S + "human:human_markdown", at=40),  # imported listening-test ratings
    Section("emotion_scores", _S + "emotion:emotion_markdown", at=50),  # which score is which
    Section(None, _S + "notes:notes_markdown", at=90),
    Section("timings", _S + "timings:timings_markdown", when_present=True, at=100),
)


def in_place(sections: Sequence[Section]) -> list[Section]:
    """``sections`` in the order of their places (ties keep the order given)."""
    return sorted(sections, key=lambda s: s.at)
