"""Noise drawn by stylebench from a seed instead of inside an ONNX graph.

A VITS voice (Piper) samples Gaussian noise in its graph (``RandomNormalLike`` nodes) and
onnxruntime draws it unseeded: ``onnxruntime.set_seed`` did not make two runs identical here, so
the same text came out with other prosody and other bytes each time. :func:`seed_random_nodes`
rewrites the loaded graph in memory (the file on disk is never touched) so that each random node
takes its values from a graph input instead, and :func:`run_seeded` feeds those inputs with
``numpy.random.default_rng`` draws from a seed the caller chooses: the same seed gives the same
samples in any process, thread or order.

The rewrite of a node ``y = RandomNormalLike(x)`` (attributes ``mean``, ``scale``, ``dtype``) is
exact: ``y`` keeps its name and consumers, and is the first ``Size(x)`` values of a 1-D input,
reshaped to ``Shape(x)``. The caller draws that input from ``mean + scale * N(0, 1)``, as the node
did. How many values a node will take is not known before the run (the frame count of a VITS
utterance follows from its sampled durations), so the input is padded with zeros inside the graph
when it is too short (``Pad``, ``Slice``, never an error) and the graph also returns how many values
each node took; when one took more than it was given, :func:`run_seeded` runs again with that
many. A standard-normal draw of ``n`` values from one generator is the first ``n`` values of a
longer draw from it (PCG64, drawn in sequence), so the longer input gives the samples the graph
would have made had it been that long from the start.

Only ``RandomNormalLike`` with a float32 output is rewritten (the node every Piper voice has, two
of them); a graph with another random op (``RandomNormal``, ``RandomUniform[Like]``,
``Multinomial``, ``Bernoulli``), one in a subgraph, or another dtype is refused with a
:class:`~stylebench.errors.BadValue` naming it, rather than run with unseeded noise.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.errors import BadValue
from stylebench.registry import MissingExtraError

#: every ONNX op that draws random values
RANDOM_OPS = frozenset(
    {
        "RandomNormal",
        "RandomNormalLike",
        "RandomUniform",
        "RandomUniformLike",
        "Multinomial",
        "Bernoulli",
    }
)
#: the one random op rewritten (VITS' ``torch.randn_like``)
SEEDED_OP = "RandomNormalLike"
#: names of what the rewrite adds to a graph start with this
PREFIX = "stylebench_noise"
#: the earliest opset whose ops the rewrite uses (``Pad`` with a ``pads`` input, int64 ``Max``)
MIN_OPSET = 12
_FLOAT = 1  # onnx.TensorProto.FLOAT


@dataclass(frozen=True)
class NoiseInput:
    """A graph input that replaces one random node: its values are ``mean + scale * N(0, 1)``,
    and ``taken`` is the graph output saying how many of them the node used."""

    name: str
    taken: str
    mean: float = 0.0
    scale: float = 1.0


@dataclass(frozen=True)
class SeededGraph:
    """A graph whose random nodes read :attr:`noise` inputs (serialised ONNX), and the names of
    the outputs of the graph it was made from."""

    model: bytes
    noise: tuple[NoiseInput, ...]
    outputs: tuple[str, ...]


def _nodes_in_subgraphs(graph: Any) -> Iterator[Any]:
    for node in graph.node:
        for attr in node.attribute:
            for sub in [attr.g] if attr.HasField("g") else list(attr.graphs):
                yield from sub.node
                yield from _nodes_in_subgraphs(sub)


def seed_random_nodes(path: Path | str) -> SeededGraph:
    """The graph at ``path`` with each ``RandomNormalLike`` node's values read from an input.

    Raises:
        MissingExtraError: the ``onnx`` package is not installed.
        BadValue: a random node that cannot be rewritten (see the module docstring), naming it.
    """
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        raise MissingExtraError(
            "the onnx package is not installed (stylebench seeds the Piper voice's noise by "
            "rewriting its graph): pip install 'stylebench[voice]'"
        ) from None
    model = onnx.load(str(path))
    graph = model.graph
    where = str(path)
    nested = [n for n in _nodes_in_subgraphs(graph) if n.op_type in RANDOM_OPS]
    others = [n for n in graph.node if n.op_type in RANDOM_OPS and n.op_type != SEEDED_OP]
    if nested or others:
        n = (nested or others)[0]
        inside = " inside a subgraph" if nested else ""
        raise BadValue(
            f"{where}: random node {n.name or '?'} ({n.op_type}){inside} cannot be seeded by "
            f"stylebench (it rewrites top-level {SEEDED_OP} nodes only)"
        )
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
    if opset < MIN_OPSET:
        raise BadValue(f"{where}: opset {opset}; stylebench seeds graphs of opset {MIN_OPSET}+")
    zero = f"{PREFIX}/zero"
    one_shape = f"{PREFIX}/one_shape"
    graph.initializer.extend(
        [
            numpy_helper.from_array(np.array([0], np.int64), zero),
            numpy_helper.from_array(np.array([1], np.int64), one_shape),
        ]
    )
    outputs = tuple(o.name for o in graph.output)
    nodes, noise = [], []
    for node in graph.node:
        if node.op_type != SEEDED_OP:
            nodes.append(node)
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if attrs.get("dtype") != _FLOAT:
            raise BadValue(
                f"{where}: random node {node.name or '?'} draws dtype {attrs.get('dtype')}; "
                "stylebench seeds float32 noise only"
            )
        k = len(noise)
        inp, p = f"{PREFIX}_{k}", f"{PREFIX}_{k}/"
        like, out = node.input[0], node.output[0]
        graph.input.append(helper.make_tensor_value_info(inp, TensorProto.FLOAT, ["n"]))
        nodes += [
            helper.make_node("Size", [like], [p + "size"]),
            helper.make_node("Reshape", [p + "size", one_shape], [p + "taken"]),
            helper.make_node("Shape", [inp], [p + "given"]),
            helper.make_node("Sub", [p + "taken", p + "given"], [p + "short"]),
            helper.make_node("Max", [p + "short", zero], [p + "pad"]),
            helper.make_node("Concat", [zero, p + "pad"], [p + "pads"], axis=0),
            helper.make_node("Pad", [inp, p + "pads"], [p + "padded"]),
            helper.make_node("Slice", [p + "padded", zero, p + "taken"], [p + "flat"]),
            helper.make_node("Shape", [like], [p + "shape"]),
            helper.make_node("Reshape", [p + "flat", p + "shape"], [out]),
        ]
        graph.output.append(helper.make_tensor_value_info(p + "taken", TensorProto.INT64, [1]))
        noise.append(
            NoiseInput(
                inp, p + "taken", float(attrs.get("mean", 0.0)), float(attrs.get("scale", 1.0))
            )
        )
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    return SeededGraph(model.SerializeToString(), tuple(noise), outputs)


def draw_noise(noise: NoiseInput, index: int, seed: Sequence[int], size: int) -> np.ndarray:
    """``size`` values of ``noise``'s draw under ``seed`` (the ``index``-th input's own stream);
    a smaller ``size`` gives a prefix of a larger one."""
    z = np.random.default_rng([*seed, index]).standard_normal(size, dtype=np.float32)
    if noise.mean != 0.0 or noise.scale != 1.0:
        z = (np.float32(noise.mean) + np.float32(noise.scale) * z).astype(np.float32)
    return z


def run_seeded(
    session: Any,
    graph: SeededGraph,
    feeds: Mapping[str, np.ndarray],
    seed: Sequence[int],
    guess: int,
) -> list[np.ndarray]:
    """Run ``session`` (made from ``graph.model``) on ``feeds`` with every noise input drawn
    from ``seed``; the outputs of the original graph.

    ``guess`` is how many values each input gets first; an input a node took more of is drawn
    again at the size it took, and the graph run again (at most twice more: the second draw
    holds the first as its prefix, so the sizes the graph asks for no longer change).
    """
    sizes = [guess] * len(graph.noise)
    names = [*graph.outputs, *(n.taken for n in graph.noise)]
    for _ in range(3):
        noise = {
            n.name: draw_noise(n, k, seed, size)
            for k, (n, size) in enumerate(zip(graph.noise, sizes, strict=True))
        }
        out = session.run(names, {**feeds, **noise})
        taken = [int(np.asarray(t).reshape(-1)[0]) for t in out[len(graph.outputs) :]]
        if all(t <= s for t, s in zip(taken, sizes, strict=True)):
            return list(out[: len(graph.outputs)])
        sizes = [max(t, s) for t, s in zip(taken, sizes, strict=True)]
    raise RuntimeError(f"seeded noise: the graph kept asking for more values ({taken})")
