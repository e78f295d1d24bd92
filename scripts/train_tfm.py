"""Train ``tabular_fm``, arenalite's tabular foundation model, on a synthetic prior (CPU torch).

Needs the ``[train]`` extra (torch); CI never installs or runs it, it tests the committed
weights. The architecture is defined exactly in docs/models.md; this file is its torch
twin, and ``arenalite.models.tabular_fm`` the numpy reference that must match it.

The prior (our own, documented here; every task is drawn from ``numpy.random.Generator``):

* **MLP structural causal model** (45 % of tasks): root causes ``z0`` (normal or uniform,
  ``n × c``) go through 1–3 random sparse layers ``z = act(z W + b) + ε`` (small noise), the
  activation drawn per layer from tanh, ReLU, leaky ReLU, sin, |x|, sigmoid and identity;
  the target is a node of the last layer and the F features are drawn from all other nodes,
  root causes included, so some features are causes of the target, some siblings, some
  barely related.
* **Oblivious trees** (35 %): features drawn per column from normal, uniform, log-normal or
  small-integer distributions; the target is a sum of 1–8 oblivious trees of depth 1–4
  (thresholds at random data quantiles, leaf values N(0, 1)) plus, half the time, a random
  linear term.
* **Clusters** (20 %): 2–12 Gaussian groups with their own centres (on a random share of
  the features, the rest pure noise) and per-feature spreads; the target is a random value
  per group, so classes are unions of groups: the task rewards comparing rows.
* Then per task: a few columns quantized to 2–6 levels (categorical-like), Gaussian noise on
  the target (SNR drawn), and the task kind: classification with 2–10 classes cut at random
  quantiles of the target (class ids shuffled), or regression on the raw target.

Each step draws a batch of tasks of one shape (rows 48–640, features 1–64 drawn log-uniformly,
a token budget fixing the batch size), splits each task's rows into context and query rows,
and minimises cross entropy (classification) or Gaussian NLL of standardized targets
(regression) on the query rows. AdamW, linear warm-up then cosine decay to a tenth of the peak,
gradient clip 1. The decay follows whichever runs out first, ``--steps`` or
``--max-minutes``, so a run on a busy machine still ends with a decayed rate.

Before the prior was changed to the one above, its MLP tasks carried almost no signal
(random forest 0.54 accuracy against 0.50 for the majority class, measured on 40 tasks);
the model trained on it learned the class prior and little else. Check a prior's signal
with ``--prior-signal`` before spending hours on it.

    python scripts/train_tfm.py --out build/tfm2 --steps 4000 --max-minutes 85
    python scripts/train_tfm.py --out build/tfm2 --export \
        pkg/arenalite/models/weights/tabular_fm.safetensors

Checkpoints (``OUT/checkpoint.pt``) are written every ``--checkpoint-every`` steps; a run
restarted with the same ``--out`` resumes from the last one (model, optimiser, step, RNG).
The loss goes to ``OUT/train_log.csv`` (one line per ``--log-every`` steps, plus a held-out
prior validation loss every ``--val-every`` steps).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

STD_FLOOR = 1e-12
CLIP = 10.0
MIN_SIGMA = 1e-3
ARCH = "tabular_fm"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))

from arenalite.models import tabular_fm  # noqa: E402

# ---------------------------------------------------------------------------------------------
# The prior
# ---------------------------------------------------------------------------------------------

def _act(rng: np.random.Generator):
    return [np.tanh, lambda x: np.maximum(x, 0.0), np.sin, np.abs,
            lambda x: np.where(x > 0, x, 0.1 * x), lambda x: x,
            lambda x: 1.0 / (1.0 + np.exp(-x))][rng.integers(7)]


def _mlp_scm(rng: np.random.Generator, n: int, f: int) -> tuple[np.ndarray, np.ndarray]:
    causes = int(rng.integers(1, max(2, f) + 3))
    width = int(rng.integers(max(4, causes), max(causes, f) + 12))
    z = rng.normal(size=(n, causes)) if rng.random() < 0.5 else rng.uniform(-2, 2, (n, causes))
    nodes = [z]
    noise = 10 ** rng.uniform(-3, -1)
    for _ in range(int(rng.integers(1, 4))):
        keep = rng.random((z.shape[1], width)) < rng.uniform(0.5, 1.0)
        w = rng.normal(size=keep.shape) * keep / math.sqrt(max(1.0, keep.sum(0).mean()))
        z = _act(rng)(z @ w + rng.normal(size=width) * 0.3) + rng.normal(0, noise, (n, width))
        z = (z - z.mean(0)) / (z.std(0) + 1e-6)
        nodes.append(z)
    target = int(rng.integers(width))
    pool = np.concatenate(nodes[:-1] + [np.delete(z, target, axis=1)], axis=1)
    if pool.shape[1] < f:
        pool = np.concatenate([pool, rng.normal(size=(n, f - pool.shape[1]))], axis=1)
    return pool[:, rng.permutation(pool.shape[1])[:f]], z[:, target]


def _clusters(rng: np.random.Generator, n: int, f: int) -> tuple[np.ndarray, np.ndarray]:
    groups = int(rng.integers(2, 13))
    informative = max(1, int(round(f * rng.uniform(0.3, 1.0))))
    centres = rng.normal(size=(groups, f)) * rng.uniform(0.5, 2.5)
    centres[:, informative:] = 0.0
    member = rng.integers(groups, size=n)
    scale = rng.uniform(0.3, 1.5, size=(groups, f))
    x = centres[member] + rng.normal(size=(n, f)) * scale[member]
    return x, rng.normal(size=groups)[member] + rng.normal(0, 0.05, n)


def _trees(rng: np.random.Generator, n: int, f: int) -> tuple[np.ndarray, np.ndarray]:
    kinds = rng.integers(4, size=f)
    x = np.where(kinds == 0, rng.normal(size=(n, f)),
                 np.where(kinds == 1, rng.uniform(-1, 1, (n, f)),
                          np.where(kinds == 2, rng.lognormal(0, 1, (n, f)),
                                   rng.integers(0, 5, (n, f)).astype(float))))
    y = np.zeros(n)
    for _ in range(int(rng.integers(1, 9))):
        depth = int(rng.integers(1, 5))
        cols = rng.integers(f, size=depth)
        thresholds = np.array([np.quantile(x[:, c], rng.uniform(0.1, 0.9)) for c in cols])
        leaf = ((x[:, cols] > thresholds) * (1 << np.arange(depth))).sum(1)
        y += rng.normal(size=1 << depth)[leaf]
    if rng.random() < 0.5:
        xs = (x - x.mean(0)) / (x.std(0) + 1e-6)
        y += xs @ (rng.normal(size=f) * (rng.random(f) < 0.5)) * rng.uniform(0.2, 1.0)
    return x, y


GENERATORS = (_mlp_scm, _trees, _clusters)
GENERATOR_WEIGHTS = (0.45, 0.35, 0.20)


def sample_task(rng: np.random.Generator, n: int, f: int, n_classes: int | None,
                generator=None):
    """One task: features ``n × f`` (float64) and a target (class ids or floats); the
    generator drawn by GENERATOR_WEIGHTS unless one of GENERATORS is given."""
    while True:
        gen = GENERATORS[int(rng.choice(3, p=GENERATOR_WEIGHTS))] if generator is None \
            else generator
        x, y = gen(rng, n, f)
        for c in np.flatnonzero(rng.random(f) < 0.15):
            levels = int(rng.integers(2, 7))
            edges = np.quantile(x[:, c], np.sort(rng.uniform(0, 1, levels - 1)))
            x[:, c] = np.searchsorted(edges, x[:, c])
        sd = y.std()
        if not np.isfinite(sd) or sd < 1e-8 or not np.isfinite(x).all():
            continue
        y = (y - y.mean()) / sd
        y = y + rng.normal(0, 10 ** rng.uniform(-2, -0.3), n)
        if n_classes is None:
            return x, y
        edges = np.quantile(y, np.sort(rng.uniform(0.05, 0.95, n_classes - 1)))
        labels = rng.permutation(n_classes)[np.searchsorted(edges, y)]
        return x, labels


def standardize(x_ctx: np.ndarray, x_q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Context mean / population std per column (std < 1e-12 → 1), clipped to ±10."""
    mean = x_ctx.mean(0)
    std = x_ctx.std(0)
    std = np.where(std < STD_FLOOR, 1.0, std)
    return (np.clip((x_ctx - mean) / std, -CLIP, CLIP),
            np.clip((x_q - mean) / std, -CLIP, CLIP))


def sample_batch(rng: np.random.Generator, max_classes: int, token_budget: int):
    """A batch of same-shape tasks, standardized with their context rows, as torch tensors."""
    f = int(np.clip(np.round(np.exp(rng.uniform(0, math.log(64)))), 1, 64))
    n = int(rng.integers(48, 257)) if rng.random() < 0.8 else int(rng.integers(256, 641))
    b = int(np.clip(token_budget // (n * (f + 1)), 1, 64))
    n_ctx = int(n * rng.uniform(0.5, 0.9))
    regression = rng.random() < 0.3
    xs_c, xs_q, ys_c, ys_q, cls = [], [], [], [], []
    for _ in range(b):
        c = None if regression else int(rng.integers(2, max_classes + 1))
        x, y = sample_task(rng, n, f, c)
        order = rng.permutation(n)
        x, y = x[order], y[order]
        xc, xq = standardize(x[:n_ctx], x[n_ctx:])
        if regression:
            mu, sd = y[:n_ctx].mean(), y[:n_ctx].std()
            sd = 1.0 if sd < STD_FLOOR else sd
            y = (y - mu) / sd
        xs_c.append(xc)
        xs_q.append(xq)
        ys_c.append(y[:n_ctx])
        ys_q.append(y[n_ctx:])
        cls.append(c or 0)
    feature_pos = np.stack([rng.permutation(MAX_FEATURES)[:f] for _ in range(b)])
    t = torch.tensor
    return {"x_ctx": t(np.stack(xs_c), dtype=torch.float32),
            "x_q": t(np.stack(xs_q), dtype=torch.float32),
            "y_ctx": t(np.stack(ys_c), dtype=torch.float32 if regression else torch.long),
            "y_q": t(np.stack(ys_q), dtype=torch.float32 if regression else torch.long),
            "n_classes": t(cls), "regression": regression, "feature_pos": t(feature_pos)}


# ---------------------------------------------------------------------------------------------
# The model (docs/models.md, tabular_fm)
# ---------------------------------------------------------------------------------------------

MAX_FEATURES = 100


class Attention(nn.Module):
    """Pre-LayerNorm multi-head attention; queries from all tokens, keys/values from ``kv``."""

    def __init__(self, d: int, heads: int, eps: float) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(d, eps=eps)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.heads = heads

    def forward(self, x: torch.Tensor, n_kv: int | None = None) -> torch.Tensor:
        a = self.ln(x)
        kv = a if n_kv is None else a[..., :n_kv, :]
        *lead, length, d = a.shape
        h = self.heads

        def split(t):
            return t.reshape(*t.shape[:-1], h, d // h).transpose(-2, -3)

        q, k, v = split(self.q(a)), split(self.k(kv)), split(self.v(kv))
        o = F.scaled_dot_product_attention(q, k, v)
        return x + self.o(o.transpose(-2, -3).reshape(*lead, length, d))


class Layer(nn.Module):
    def __init__(self, d: int, heads: int, d_mlp: int, eps: float) -> None:
        super().__init__()
        self.feature_attn = Attention(d, heads, eps)
        self.row_attn = Attention(d, heads, eps)
        self.ln = nn.LayerNorm(d, eps=eps)
        self.w1 = nn.Linear(d, d_mlp)
        self.w2 = nn.Linear(d_mlp, d)

    def forward(self, h: torch.Tensor, n_ctx: int) -> torch.Tensor:
        """``h``: (tasks, rows, tokens, d), context rows first."""
        h = self.feature_attn(h)
        h = self.row_attn(h.transpose(1, 2), n_ctx).transpose(1, 2)
        return h + self.w2(F.gelu(self.w1(self.ln(h)), approximate="tanh"))


class TabularFM(nn.Module):
    def __init__(self, config: dict, seed: int = 0) -> None:
        super().__init__()
        d, eps = config["d_model"], config["ln_eps"]
        self.config = dict(config)
        self.cell_w = nn.Parameter(torch.randn(d) * 0.5)
        self.cell_b = nn.Parameter(torch.zeros(d))
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("feature_codes",
                             torch.randn(config["max_features"], d, generator=g))
        self.feature_proj = nn.Linear(d, d, bias=False)
        self.target_cls = nn.Parameter(torch.randn(config["max_classes"], d) * 0.5)
        self.target_reg_w = nn.Parameter(torch.randn(d) * 0.5)
        self.target_reg_b = nn.Parameter(torch.zeros(d))
        self.target_unknown = nn.Parameter(torch.randn(d) * 0.5)
        self.layers = nn.ModuleList(Layer(d, config["n_heads"], config["d_mlp"], eps)
                                    for _ in range(config["n_layers"]))
        self.head_ln = nn.LayerNorm(d, eps=eps)
        self.head_cls = nn.Linear(d, config["max_classes"])
        self.head_reg = nn.Linear(d, 2)

    def feature_embedding(self) -> torch.Tensor:
        return self.feature_proj(self.feature_codes)

    def forward(self, x_ctx, y_ctx, x_q, regression: bool, feature_pos=None):
        """Outputs for the query rows: (tasks, m, max_classes) logits or (tasks, m, 2)."""
        tasks, n_ctx, f = x_ctx.shape
        x = torch.cat([x_ctx, x_q], dim=1)
        cells = x[..., None] * self.cell_w + self.cell_b
        emb = self.feature_embedding()
        if feature_pos is None:
            feature_pos = torch.arange(f).expand(tasks, f)
        cells = cells + emb[feature_pos][:, None]
        if regression:
            t_ctx = y_ctx[..., None] * self.target_reg_w + self.target_reg_b
        else:
            t_ctx = self.target_cls[y_ctx]
        t_q = self.target_unknown.expand(tasks, x_q.shape[1], -1)
        h = torch.cat([cells, torch.cat([t_ctx, t_q], dim=1)[:, :, None]], dim=2)
        for layer in self.layers:
            h = layer(h, n_ctx)
        z = self.head_ln(h[:, n_ctx:, -1])
        return self.head_reg(z) if regression else self.head_cls(z)


def loss_of(model: TabularFM, batch: dict) -> torch.Tensor:
    out = model(batch["x_ctx"], batch["y_ctx"], batch["x_q"], batch["regression"],
                batch["feature_pos"])
    if batch["regression"]:
        mu, s = out[..., 0], out[..., 1]
        sigma = F.softplus(s) + MIN_SIGMA
        z = (batch["y_q"] - mu) / sigma
        return (torch.log(sigma) + 0.5 * z * z + 0.5 * math.log(2 * math.pi)).mean()
    classes = torch.arange(out.shape[-1])
    mask = classes[None, :] >= batch["n_classes"][:, None]
    out = out.masked_fill(mask[:, None, :], float("-inf"))
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), batch["y_q"].reshape(-1))


# ---------------------------------------------------------------------------------------------
# Export: safetensors (8-byte little-endian header length, JSON header, little-endian buffer)
# ---------------------------------------------------------------------------------------------

def tensors_of(model: TabularFM) -> dict[str, np.ndarray]:
    """The model's tensors under the names of docs/models.md (weights as ``x @ W``)."""
    def lin(prefix, lin_mod, out):
        out[prefix + ".w"] = lin_mod.weight.detach().numpy().T
        out[prefix + ".b"] = lin_mod.bias.detach().numpy()

    out = {"cell.w": model.cell_w.detach().numpy(), "cell.b": model.cell_b.detach().numpy(),
           "feature.emb": model.feature_embedding().detach().numpy(),
           "target.cls": model.target_cls.detach().numpy(),
           "target.reg.w": model.target_reg_w.detach().numpy(),
           "target.reg.b": model.target_reg_b.detach().numpy(),
           "target.unknown": model.target_unknown.detach().numpy()}
    for i, layer in enumerate(model.layers):
        for part, attn in (("fa", layer.feature_attn), ("ra", layer.row_attn)):
            p = f"layers.{i}.{part}."
            out[p + "ln.g"] = attn.ln.weight.detach().numpy()
            out[p + "ln.b"] = attn.ln.bias.detach().numpy()
            for name in "qkvo":
                lin(p + name, getattr(attn, name), out)
        p = f"layers.{i}.mlp."
        out[p + "ln.g"] = layer.ln.weight.detach().numpy()
        out[p + "ln.b"] = layer.ln.bias.detach().numpy()
        lin(p + "w1", layer.w1, out)
        lin(p + "w2", layer.w2, out)
    out["head.ln.g"] = model.head_ln.weight.detach().numpy()
    out["head.ln.b"] = model.head_ln.bias.detach().numpy()
    lin("head.cls", model.head_cls, out)
    lin("head.reg", model.head_reg, out)
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in out.items()}


def export(model: TabularFM, path: Path, extra: dict) -> None:
    """Write the weights with arenalite's own writer (config in the safetensors metadata)."""
    config = {k: model.config[k] for k in tabular_fm.CONFIG_KEYS}
    path.parent.mkdir(parents=True, exist_ok=True)
    tabular_fm.write_weights(path, config, tensors_of(model),
                             {k: str(v) for k, v in extra.items()})


# ---------------------------------------------------------------------------------------------
# Training loop
# ---------------------------------------------------------------------------------------------

def lr_at(step: int, steps: int, peak: float, warmup: int, time_fraction: float = 0.0) -> float:
    """Linear warm-up, then cosine decay to a tenth of ``peak`` over steps or time."""
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = min(1.0, max((step - warmup) / max(1, steps - warmup), time_fraction))
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def validation_batches(max_classes: int, budget: int, count: int = 12) -> list[dict]:
    rng = np.random.default_rng(10_000)
    return [sample_batch(rng, max_classes, budget) for _ in range(count)]


def evaluate(model: TabularFM, batches: list[dict]) -> tuple[float, float]:
    model.eval()
    cls, reg = [], []
    with torch.no_grad():
        for b in batches:
            (reg if b["regression"] else cls).append(float(loss_of(model, b)))
    model.train()
    return float(np.mean(cls)), float(np.mean(reg))


def prior_signal(n_tasks: int = 40, seed: int = 0) -> dict[str, tuple[float, float, float]]:
    """Accuracy of the majority class, logistic regression and a random forest per generator.

    A prior whose tasks a random forest cannot beat the majority class on teaches a model
    nothing about comparing rows; this is the check to run before training on it.
    """
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression

    out = {}
    for gen in GENERATORS:
        rng = np.random.default_rng(seed)
        rows = []
        for _ in range(n_tasks):
            f = int(np.clip(np.round(np.exp(rng.uniform(0, math.log(64)))), 1, 64))
            n, k = int(rng.integers(100, 300)), int(rng.integers(2, 6))
            x, labels = sample_task(rng, n, f, k, generator=gen)
            n_ctx = int(n * 0.7)
            xc, xq = standardize(x[:n_ctx], x[n_ctx:])
            yc, yq = labels[:n_ctx], labels[n_ctx:]
            if len(np.unique(yc)) < 2:
                continue
            rows.append((np.mean(yq == np.bincount(yc).argmax()),
                         LogisticRegression(max_iter=300).fit(xc, yc).score(xq, yq),
                         RandomForestClassifier(50, random_state=0).fit(xc, yc).score(xq, yq)))
        out[gen.__name__.strip("_")] = tuple(np.mean(rows, axis=0))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("build/tfm"))
    ap.add_argument("--steps", type=int, default=4000)
    ap.add_argument("--max-minutes", type=float, default=float("inf"))
    ap.add_argument("--d-model", type=int, default=96)
    ap.add_argument("--n-heads", type=int, default=4)
    ap.add_argument("--n-layers", type=int, default=3)
    ap.add_argument("--d-mlp", type=int, default=192)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=150)
    ap.add_argument("--token-budget", type=int, default=40_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--val-every", type=int, default=200)
    ap.add_argument("--checkpoint-every", type=int, default=50)
    ap.add_argument("--export", type=Path, help="write the checkpoint's weights here and stop")
    ap.add_argument("--prior-signal", action="store_true",
                    help="print each generator's majority / logistic / forest accuracy, stop")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.prior_signal:
        for name, (majority, logistic, forest) in prior_signal().items():
            print(f"{name:9s} majority {majority:.3f}  logistic {logistic:.3f}  "
                  f"forest {forest:.3f}")
        return 0
    config = {"d_model": args.d_model, "n_heads": args.n_heads, "n_layers": args.n_layers,
              "d_mlp": args.d_mlp, "max_features": MAX_FEATURES, "max_classes": 10,
              "max_context": 1024, "ln_eps": 1e-5}
    args.out.mkdir(parents=True, exist_ok=True)
    ckpt_path = args.out / "checkpoint.pt"
    torch.manual_seed(args.seed)
    model = TabularFM(config, seed=args.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    rng = np.random.default_rng(args.seed)
    step, elapsed = 0, 0.0
    if ckpt_path.exists():
        state = torch.load(ckpt_path, weights_only=False)
        if state["config"] != config:
            sys.exit(f"checkpoint {ckpt_path} has config {state['config']}, not {config}")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
        step, elapsed = state["step"], state["elapsed"]
        print(f"resumed at step {step} ({elapsed / 60:.1f} min trained)", flush=True)
    if args.export:
        export(model, args.export, {"steps": step, "train_minutes": f"{elapsed / 60:.1f}",
                                    "trainer": "scripts/train_tfm.py"})
        print(f"wrote {args.export} (step {step})")
        return 0
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{ARCH}: {n_params} parameters, config {config}", flush=True)
    log_path = args.out / "train_log.csv"
    new_log = not log_path.exists()
    log = log_path.open("a", newline="")
    writer = csv.writer(log)
    if new_log:
        writer.writerow(["step", "minutes", "lr", "train_loss_cls", "train_loss_reg",
                         "val_loss_cls", "val_loss_reg"])
    val = validation_batches(config["max_classes"], args.token_budget)
    window: dict[bool, list[float]] = {False: [], True: []}
    start = time.time() - elapsed

    def save():
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "config": config,
                    "rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
                    "step": step, "elapsed": time.time() - start}, ckpt_path.with_suffix(".tmp"))
        ckpt_path.with_suffix(".tmp").replace(ckpt_path)

    while step < args.steps and (time.time() - start) / 60 < args.max_minutes:
        lr = lr_at(step, args.steps, args.lr, args.warmup,
                   (time.time() - start) / 60 / args.max_minutes)
        for group in opt.param_groups:
            group["lr"] = lr
        batch = sample_batch(rng, config["max_classes"], args.token_budget)
        loss = loss_of(model, batch)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        window[batch["regression"]].append(float(loss.detach()))
        step += 1
        if step % args.log_every == 0 or step % args.val_every == 0:
            vc, vr = evaluate(model, val) if step % args.val_every == 0 else ("", "")
            tc = np.mean(window[False]) if window[False] else ""
            tr = np.mean(window[True]) if window[True] else ""
            writer.writerow([step, f"{(time.time() - start) / 60:.2f}", f"{lr:.3g}", tc, tr,
                             vc, vr])
            log.flush()
            window = {False: [], True: []}
            print(f"step {step} {(time.time() - start) / 60:.1f} min cls {tc} reg {tr}"
                  + (f" | val cls {vc:.4f} reg {vr:.4f}" if vc != "" else ""), flush=True)
        if step % args.checkpoint_every == 0:
            save()
    save()
    vc, vr = evaluate(model, val)
    print(f"done at step {step}: val cls {vc:.4f} reg {vr:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
