"""The comparison's figures (stylebench.report.figures, stylebench.compare.figures) drawn from
synthetic compare results: deterministic bytes, n stated, 1/3/10 models, calibration lines,
models that failed the gate apart, greyscale-safe looks, markup in a name kept as text."""

from __future__ import annotations

import copy
import re

import pytest

pytest.importorskip("matplotlib")

from stylebench.compare.figures import (  # noqa: E402
    comparison_figures,
    figure_models,
    figures_html,
    figures_md,
    write_figures,
)
from stylebench.report.figures import (  # noqa: E402
    Model,
    change_figure,
    looks,
    render,
    vsp_figure,
)

XSS = "<script>alert(1)</script>$\\frac{a}{$"  # markup, and mathtext that cannot parse
DIMS = ("speed", "volume", "pitch")


def synthetic_result(models: list[str], *, failed: tuple[str, ...] = ()) -> dict:
    """A compare result with the keys the figures read: the leaderboard (calibration, gate),
    Table 4 rows, tables.change and the quality changes; numbers differ per model."""
    board, dims, change, quality = [], [], [], []
    for i, m in enumerate(models):
        calibration = m in ("reference", "neutral", "shuffled")
        board.append(
            {
                "model": m,
                "calibration": calibration,
                "eligible": m not in failed,
                "carried_forward": m not in failed,
            }
        )
        base = {"reference": 100.0, "neutral": 0.0, "shuffled": 100.0}.get(m, 10.0 + 7.0 * i)
        for d in DIMS:
            for pair in ("1-2", "2-3"):
                dirn = {"neutral": 50.0}.get(m, min(100.0, base + 30.0))
                dims.append(
                    {
                        "model": m,
                        "dim": d,
                        "pair": pair,
                        "source": "acoustic",
                        "vsp": base,
                        "vsp_ci": [max(0.0, base - 8), min(100.0, base + 8)],
                        "vsp_direction": dirn,
                        "vsp_direction_ci": [max(0.0, dirn - 9), min(100.0, dirn + 9)],
                        "n_ok": 11 + (i % 2),
                        "n": 12,
                    }
                )
            for direction in ("intensify", "attenuate"):
                sign = 1.0 if direction == "intensify" else -1.0
                for t in (1, 2, 3):
                    mean = sign * (t - 1) * base / 40.0
                    change.append(
                        {
                            "model": m,
                            "dim": d,
                            "direction": direction,
                            "lang": "en",
                            "turn": t,
                            "mean": mean,
                            "ci": None if t == 1 else [mean - 0.5, mean + 0.5],
                            "n": 6,
                        }
                    )
        for pair in ("1-2", "1-3"):
            q = {"model": m, "pair": pair, "n": 12}
            for s in ("sig", "bak", "ovrl"):
                q[f"d_{s}"] = -0.05 * i
                q[f"d_{s}_ci"] = [-0.05 * i - 0.1, -0.05 * i + 0.1]
            quality.append(q)
    return {
        "models": sorted(models),
        "n_shared": 12,
        "leaderboard": board,
        "tables": {"dims": dims, "change": change},
        "quality": {"turns": [], "changes": quality},
    }


def _texts(svg: bytes) -> list[str]:
    """The text the SVG draws (text is kept as text: svg.fonttype none)."""
    return [
        re.sub(r"<[^>]+>", "", t)
        for t in re.findall(r"<text[^>]*>(.*?)</text>", svg.decode(), re.S)
    ]


@pytest.fixture(scope="module")
def ten():
    names = ["reference", "neutral", "shuffled"] + [f"model-{k}" for k in range(7)]
    result = synthetic_result(names, failed=("shuffled", "model-6"))
    return result, comparison_figures(result)


@pytest.fixture(scope="module")
def two():
    """Two models, one with markup and mathtext in its name."""
    result = synthetic_result(["reference", XSS])
    return result, comparison_figures(result)


def test_figures_are_deterministic_and_leave_the_numbers_alone(two, ten):
    result, figs = two
    before = copy.deepcopy(result)
    again = comparison_figures(result)
    assert [f.data for f in again] == [f.data for f in figs]  # byte for byte
    assert result == before
    assert [f.name for f in ten[1]] == [
        "vsp.svg",
        "vsp_direction.svg",
        "change-speed.svg",
        "change-volume.svg",
        "change-pitch.svg",
        "quality.svg",
    ]
    for f in ten[1]:
        assert "<dc:date>" not in f.data.decode() and f.mime == "image/svg+xml"


def test_every_figure_says_n(ten):
    _, figs = ten
    by = {f.name: _texts(f.data) for f in figs}
    assert by["vsp.svg"].count("11/12") == 5 * 6 and by["vsp.svg"].count("12/12") == 5 * 6
    assert "speed, turns 1-2 (n 11–12)" in by["vsp.svg"]
    assert "intensify, en (n 6 per point)" in by["change-pitch.svg"]
    assert "n 12/12" in by["quality.svg"]


def test_calibration_rows_are_lines_and_failed_models_sit_apart(ten):
    result, figs = ten
    models = figure_models(result)
    assert [m.calibration for m in models[:3]] == ["reference", "neutral", "shuffled"]
    texts = _texts(figs[1].data)  # the direction-only figure
    assert {"reference row", "neutral row", "shuffled row"} <= set(texts)
    assert "shuffled (not eligible)" in texts and "model-6 (not eligible)" in texts
    fig = vsp_figure(result["tables"]["dims"], models, rate="vsp_direction")
    ax = fig.axes[0]
    vertical = [
        x for x in (line.get_xdata() for line in ax.get_lines()) if len(x) == 2 == 2 * len(set(x))
    ]
    lines = sorted(round(x[0], 1) for x in vertical)
    assert lines == [50.0, 100.0, 100.0]  # neutral's, reference's and shuffled's rate
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks[-2:] == ["shuffled (not eligible)", "model-6 (not eligible)"]


def _height(svg: bytes) -> float:
    return float(re.search(r'height="([\d.]+)pt"', svg.decode()).group(1))


@pytest.mark.parametrize("k", [1, 3])
def test_readable_with_1_3_and_10_models(k, ten):
    """The rows grow with the models (10: the module's figures), each model named in each."""
    names = [f"m{i}" for i in range(k)]
    result = synthetic_result(names)
    models = figure_models(result)
    vsp = render(vsp_figure(result["tables"]["dims"], models))
    change = render(change_figure("pitch", result["tables"]["change"], models, "st"))
    for svg in (vsp, change):
        assert all(n in _texts(svg) for n in names)
    grown = _height(ten[1][0].data) - _height(vsp)  # 10 models (2 apart) against k
    assert 30 * (10 - k) < grown < 60 * (11 - k)
    for f in ten[1]:
        texts = _texts(f.data)
        assert all(any(t.startswith(n) for t in texts) for n in ("reference", "model-0", "model-6"))


def test_models_get_looks_that_differ_without_colour():
    models = [Model(f"m{i}") for i in range(10)] + [Model("reference", "reference")]
    lk = looks(models)
    assert len({(x.marker, x.linestyle) for x in lk.values()}) == 11
    assert lk["reference"].colour == "#000000" and lk["reference"].linestyle == "-"


def test_markup_and_mathtext_in_a_name_stay_text(two):
    _, figs = two  # drawn: no mathtext error from "$\\frac{a}{"
    for f in figs:
        svg = f.data.decode()
        assert "<script>" not in svg and "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
        assert any(t.endswith("$\\frac{a}{$") for t in _texts(f.data))  # drawn as written
    html = "".join(figures_html(figs, None))
    assert "<script>" not in html and html.count("<img ") == len(figs)
    assert "figures/vsp.svg" in "\n".join(figures_md(figs, None))


def test_figure_files_are_written_and_stale_ones_removed(two, tmp_path):
    _, figs = two
    written = write_figures(tmp_path, figs)
    assert [p.read_bytes() for p in written] == [f.data for f in figs]
    (tmp_path / "figures" / "change-emotion.svg").write_text("<svg/>")
    write_figures(tmp_path, [f for f in figs if f.name != "quality.svg"])
    names = sorted(p.name for p in (tmp_path / "figures").iterdir())
    assert "quality.svg" not in names and "change-emotion.svg" not in names


def test_render_is_the_same_bytes_for_png_too():
    rows = synthetic_result(["a"])["tables"]["dims"]
    first, second = (render(vsp_figure(rows, [Model("a")]), "png") for _ in range(2))
    assert first == second and first[:4] == b"\x89PNG"


def test_decay_curves_say_n_and_keep_the_calibration_looks():
    from stylebench.report.figures import decay_figure

    def cells(values):
        return [
            {"dim": "volume", "direction": d, "lang": "en", "turn": t, "persistence": v, "n_ok": 3}
            for d in ("intensify", "attenuate")
            for t, v in zip((1, 2, 3), values, strict=True)
        ]

    by_model = {
        "reference": cells((100.0, 100.0, 100.0)),
        "forgetful": cells((100.0, 0.0, 0.0)),
        "mine": cells((100.0, 50.0, None)),
    }
    models = [Model("reference", "reference"), Model("mine"), Model("forgetful", "forgetful")]
    fig = decay_figure(by_model, [1, 2, 3], models)
    ax = fig.axes[0]
    assert ax.get_title() == "volume (n 6 per point)"  # two cells of 3 samples each turn
    curves = {line.get_label(): list(line.get_ydata()) for line in ax.get_lines()}
    assert curves == {
        "reference": [100.0, 100.0, 100.0],
        "mine": [100.0, 50.0],
        "forgetful": [100.0, 0.0, 0.0],
    }
    styles = {line.get_label(): line.get_linestyle() for line in ax.get_lines()}
    assert styles["reference"] == "-" and styles["forgetful"] == "-."


def test_several_runs_of_one_calibration_model_are_told_apart():
    """Two neutral runs (labels made unique) are not both drawn as the neutral row: each gets
    a look of its own and neither is a line; the only reference run still is."""
    result = synthetic_result(["reference", "neutral@a", "neutral@b"])
    for s in result["leaderboard"]:
        s["calibration"] = True
    models = figure_models(result)
    assert [m.calibration for m in models] == ["reference", None, None]
    lk = looks(models)
    assert lk["neutral@a"] != lk["neutral@b"]
