"""Floating-point operations of one TabICL member's forward, per stage, from its config.

Counts the matrix products (2 · M · K · N per linear layer) and attention (4 · queries · keys
· width: scores and the weighted sum), the work that dominates every stage; LayerNorm,
GELU, RoPE and the softmax's exponentials are left out (a few per cent at these widths).
The stages are the StageTimer's: ``column`` (the induced blocks over the context rows,
then the query rows over the cached hidden points), ``row`` (every block of every row's
tokens), ``icl`` (context keys/values, context rows through all but the last layer, query
rows through all) and ``head``. Used by ``bench_webgpu_peer.py`` for achieved GFLOP/s.
"""

from __future__ import annotations


def linear(rows: int, k: int, n: int) -> float:
    return 2.0 * rows * k * n


def block(rows: int, keys: int, width: int, ff: int) -> float:
    """A pre-norm attention block: queries projected, attention, out projection, MLP."""
    return (linear(rows, width, width) + 4.0 * rows * keys * width
            + linear(rows, width, width) + linear(rows, width, ff) + linear(rows, ff, width))


def tabicl_flops(config: dict, n: int, m: int, h: int) -> dict[str, float]:
    """FLOPs per stage of one member at n context rows, m query rows, h features."""
    e = int(config["embed_dim"])
    ff_factor = int(config["ff_factor"])
    group = config["col_feature_group"]
    size = int(config["col_feature_group_size"])
    columns = -(-h // size) if group == "valid" else h
    inds = int(config["col_num_inds"])
    col = 0.0
    for _ in range(int(config["col_num_blocks"])):
        col += columns * (linear(n, e, 2 * e)                            # keys/values of the rows
                          + block(inds, n, e, e * ff_factor)          # inducing points over rows
                          + linear(inds, e, 2 * e)                       # keys/values of the points
                          + block(n + m, inds, e, e * ff_factor))     # rows over the points
    tokens = columns + int(config["row_num_cls"])
    rows = n + m
    row = 0.0
    blocks = int(config["row_num_blocks"])
    for b in range(blocks):
        queries = int(config["row_num_cls"]) if b == blocks - 1 else tokens
        row += rows * (linear(tokens, e, 2 * e) + block(queries, tokens, e, e * ff_factor))
    d = e * int(config["row_num_cls"])
    icl = 0.0
    layers = int(config["icl_num_blocks"])
    for layer in range(layers):
        icl += linear(n, d, 2 * d) + block(m, n, d, d * ff_factor)
        if layer < layers - 1:
            icl += block(n, n, d, d * ff_factor)
    head = linear(m, d, 2 * d) + linear(m, 2 * d, int(config["max_classes"]))
    return {"column": col, "row": row, "icl": icl, "head": head}
