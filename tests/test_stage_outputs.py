"""What a stage adds after it ran (``StageSpec.scores``, ``.report``, ``.compare``) reaches the
scored run, report.json, report.md and the comparison from its spec alone, at its places.

A stage declared only in ``STAGES`` (its hooks here, nothing else edited) shows in every output;
the declared places keep the files' layout; the stages' own parts land where they did before
stages declared them."""

from __future__ import annotations

import json

import pytest

from stylebench.commands.runs import rescore
from stylebench.commands.runs import run as run_pipeline
from stylebench.compare.build import compare_runs
from stylebench.compare.html import render_html
from stylebench.compare.load import load_run
from stylebench.compare.md import render_md
from stylebench.config import make_config
from stylebench.records import RESPONSES, RecordKind
from stylebench.report.sections import Section
from stylebench.stages import registry
from stylebench.stages.outputs import ReportPart, ScoredPart, StageCompare, StageReport

ECHO = RecordKind("echo", dict)


def echo_markdown(block):
    """The echo stage's report section."""
    return ["## Echo", "", f"{block['n_samples']} samples, {block['n_ok_replies']} ok replies", ""]


def _echo_scores(inputs):
    ok = sum(r.status == "ok" for r in inputs.measured.records.of(RESPONSES).values())
    drop = frozenset(s.id for s in inputs.samples if s.direction == "attenuate")
    return ScoredPart(value={"n_samples": len(inputs.samples), "n_ok_replies": ok}, exclude=drop)


def _echo_rows(runs, shared, boot):
    return [{"model": r.label, **r.scored.part("echo").value} for r in runs]


ECHO_SPEC = registry.StageSpec(
    ECHO,
    (RESPONSES,),
    "measure",
    lambda cfg, samples: False,  # computes nothing: what it adds is read from the replies
    lambda ctx: pytest.fail("the echo stage never runs"),
    scores=_echo_scores,
    report=StageReport(
        lambda scored: ReportPart({"echo": scored.part("echo").value}, ("the echo stage ran",)),
        blocks_at=35,  # after the relevance gate's keys (30), before captions (40)
        notes_at=35,  # after the gate's notes, before the speed source note (40)
        sections=(Section("echo", "test_stage_outputs:echo_markdown", at=25),),
    ),
    compare=(
        StageCompare(
            _echo_rows,
            "tables.echo",
            json_at=15,  # between the relevance table (10) and dims (20)
            shown_at=25,
            markdown=lambda rows: ["", "## Echo table", "", *(f"- {r['model']}" for r in rows)],
            html=lambda rows: ["<h2>Echo table</h2>"],
        ),
    ),
)


@pytest.fixture(scope="module")
def runs(small_set, tmp_path_factory):
    out = tmp_path_factory.mktemp("stage_outputs")
    roots = []
    for model in ("neutral", "reference"):
        cfg = make_config(
            model=model,
            dim="volume",
            lang="en",
            limit=1,
            asr="none",
            vad="energy",
            judge="offline",
            n_boot=50,
            quality=False,
            dialogues=str(small_set),
            out=str(out),
        )
        roots.append(run_pipeline(cfg, progress=False).store.root)
    return roots, (roots[1] / "report.json").read_bytes()


@pytest.fixture
def with_echo(monkeypatch):
    monkeypatch.setattr(registry, "STAGES", (*registry.STAGES, ECHO_SPEC))


def test_a_declared_stage_reaches_the_scored_run_and_the_report(runs, with_echo):
    runs, written = runs
    before = json.loads(written)
    rep = rescore(runs[1], {}, progress=False).report
    assert rep["echo"] == {"n_samples": 2, "n_ok_replies": 6}
    keys = list(rep)
    # its block sits between the relevance gate's keys and the stages' blocks after them
    assert keys.index("eligible") < keys.index("echo") < keys.index("quality")
    assert [k for k in keys if k != "echo"] == list(before)
    notes = rep["notes"]
    assert "the echo stage ran" in notes
    gate_notes = [i for i, n in enumerate(notes) if "relevance" in n or "offline" in n.lower()]
    assert max(gate_notes) < notes.index("the echo stage ran")
    # the samples it excludes leave every style cell: only the intensify samples are counted
    assert {c["direction"] for c in rep["cells"]} == {"intensify"}
    md = (runs[1] / "report.md").read_text(encoding="utf-8")
    assert md.index("## Speech quality") < md.index("## Echo") < md.index("## Relevance")


def test_without_the_stage_the_report_is_as_the_run_wrote_it(runs):
    runs, written = runs
    rescore(runs[1], {}, progress=False)
    assert (runs[1] / "report.json").read_bytes() == written


def test_a_declared_stage_reaches_the_comparison(runs, with_echo):
    runs = runs[0]
    loaded = [load_run(r) for r in runs]
    res = compare_runs(loaded, n_boot=50)
    # tables.change: what the comparison's change figures draw (after the paper's tables)
    assert list(res["tables"]) == ["relevance", "echo", "dims", "emotion", "retention", "change"]
    assert [r["model"] for r in res["tables"]["echo"]] == ["neutral", "reference"]
    assert list(res).index("tables") < list(res).index("quality") < list(res).index("notes")
    md = render_md(res)
    assert md.index("(Table 2)") < md.index("## Echo table") < md.index("(Table 4)")
    page = render_html(res, loaded, runs[0].parent)
    assert page.index("(Table 2)") < page.index("Echo table") < page.index("(Table 4)")


def test_the_stages_tables_keep_their_places(runs):
    runs = runs[0]
    res = compare_runs([load_run(r) for r in runs], n_boot=50)
    assert list(res) == [
        "format",
        "stylebench",
        "models",
        "calibration",
        "n_shared",
        "n_dropped",
        "settings",
        "leaderboard",
        "cells",
        "tables",
        "quality",
        "notes",
    ]
    assert list(res["tables"]) == ["relevance", "dims", "emotion", "retention", "change"]
    md = render_md(res)
    order = ["## Leaderboard", "(Table 2)", "(Table 4)", "## Turn-3", "## Cells"]
    assert [md.index(h) for h in order] == sorted(md.index(h) for h in order)


def test_every_hook_a_stage_names_resolves():
    # hooks named as "module:function" import on first use: each must exist, or a report fails
    # only when that stage's part is first built
    import importlib

    named = []
    for spec in registry.STAGES:
        hooks = [spec.scores]
        if spec.report:
            hooks.append(spec.report.build)
        for part in spec.compare:
            hooks += [part.build, part.markdown, part.html]
        named += [h.__name__ for h in hooks if h is not None and ":" in h.__name__]
    assert len(named) >= 10
    for target in named:
        module, _, name = target.partition(":")
        assert callable(getattr(importlib.import_module(module), name)), target
