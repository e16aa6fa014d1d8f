"""lut-quantization: layer-wise non-uniform (lookup-table) weight quantization, a CPU proxy of GANQ.

Zhao and Yuan (ICML 2025) quantize each weight matrix ``W`` (``m x n``) of a
trained network to ``b`` bits with a per-row lookup table: row ``i`` keeps a
codebook ``T_i`` of ``2**b`` real values and every weight of that row is
replaced by one of them, chosen to minimise the layer's output error on
calibration activations ``X`` (``n x p``),

    min  ||W X - W_hat X||_F^2,   W_hat[i, j] = T_i[codes[i, j]].

Here the matrices come from two kinds of models that the task builds itself:

- ``mlp``: a tanh MLP 64-128-128-10 trained on scikit-learn's bundled digits
  (numpy full-batch Adam, deterministic), calibration on training images and a
  held-out split of test images;
- ``gpt2`` (and ``gpt2-small`` in the full tier): a ``transformers`` GPT-2
  config with random weights drawn from numpy's generator in GPT-2's own
  initialisation scheme (no download), fed token sequences from a seeded Zipf
  distribution.

A method sees every layer's ``W`` and ``X`` and returns, per layer, the
codebook and the codes. The task rebuilds ``W_hat`` from them (at most
``2**b`` values per row by construction), recomputes the relative output
error on the calibration inputs and on held-out inputs that the method never
sees, quantizes every layer of the model at once and measures how far its
outputs move (KL divergence and top-1 agreement with the full-precision
model). See ``tasks/lut_quantization/README.md``.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from bench.instances import Catalog, CatalogTask, Choice, IdForm, Int, grid
from bench.registry import register_task
from bench.task import (
    Instance,
    InstanceSpec,
    InvalidSolution,
    Metric,
    Normalization,
    Paper,
    Reference,
    TaskMeta,
)

__all__ = [
    "BITS",
    "CATALOG",
    "MODELS",
    "LutQuantizationTask",
    "dequantize",
    "gpt2_model",
    "layer_errors",
    "nearest_codes",
    "rtn_codebook",
    "train_mlp",
    "trained_mlp",
    "uniform_quantize",
]

BITS = (3, 4)

#: The models an instance can be built from. ``mlp`` widths are layer sizes; the
#: GPT-2 entries are ``transformers.GPT2Config`` fields, plus the calibration and
#: held-out token counts (``sequences x n_positions`` each).
MODELS: dict[str, dict[str, Any]] = {
    "mlp": {
        "kind": "mlp",
        "widths": (64, 128, 128, 10),
        "steps": 200,
        "lr": 0.01,
        "calibration": 512,
    },
    "gpt2": {
        "kind": "gpt2",
        "config": {
            "vocab_size": 512,
            "n_positions": 64,
            "n_embd": 256,
            "n_layer": 2,
            "n_head": 4,
            "n_inner": 1024,
        },
        "calibration": 32,
        "heldout": 8,
    },
    "gpt2-small": {
        "kind": "gpt2",
        "config": {
            "vocab_size": 4096,
            "n_positions": 128,
            "n_embd": 768,
            "n_layer": 4,
            "n_head": 12,
            "n_inner": 3072,
        },
        "calibration": 32,
        "heldout": 8,
    },
}

#: Zipf exponent of the synthetic token stream fed to the GPT-2 models.
ZIPF = 1.1
#: GPT-2's ``initializer_range`` (the std of every weight matrix and embedding).
INIT_STD = 0.02


def _check_fields(fields: dict[str, Any]) -> None:
    if fields["bits"] not in BITS:
        raise ValueError(f"{fields}: bits must be one of {BITS} (the paper's settings)")


#: Ids ``<model>-w<bits>-s<seed>``: the seed draws the model (training split and
#: initial weights, or the GPT-2 weights) and its calibration and held-out inputs.
CATALOG = Catalog(
    IdForm(
        "lut-quantization",
        "{model}-w{bits}-s{seed}",
        example="mlp-w3-s0",
        model=Choice(tuple(MODELS), what="model"),
        bits=Int(label="bits", minimum=1),
        seed=Int(),
    ),
    {
        "smoke": grid(model=("mlp",), bits=BITS, seed=(0,)),
        "standard": grid(model=("mlp", "gpt2"), bits=BITS, seed=(0, 1, 2, 3, 4)),
        "full": grid(model=("mlp", "gpt2"), bits=BITS, seed=tuple(range(10)))
        + grid(model=("gpt2-small",), bits=BITS, seed=(0, 1, 2)),
    },
    validate=_check_fields,
)


# ----------------------------------------------------------------------------- quantization helpers


def dequantize(codebook: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``W_hat[i, j] = codebook[i, codes[i, j]]`` (float64)."""
    return np.take_along_axis(
        np.asarray(codebook, dtype=np.float64), np.asarray(codes, dtype=np.intp), axis=1
    )


def rtn_codebook(W: np.ndarray, bits: int) -> np.ndarray:
    """Each row's uniform asymmetric grid of ``2**bits`` levels, as GPTQ's per-channel quantizer builds it.

    The range is ``[min(w_min, 0), max(w_max, 0)]``, ``scale = range / (2**bits - 1)`` and the
    zero point ``round(-min / scale)`` is an integer, so 0 is a level: level ``k`` is
    ``scale * (k - zero)``. A row of zeros gets the range ``[-1, 1]``.
    """
    W = np.asarray(W, dtype=np.float64)
    lo, hi = np.minimum(W.min(axis=1), 0.0), np.maximum(W.max(axis=1), 0.0)
    flat = (lo == 0) & (hi == 0)
    lo, hi = np.where(flat, -1.0, lo), np.where(flat, 1.0, hi)
    scale = (hi - lo) / (2**bits - 1)
    zero = np.rint(-lo / scale)
    return scale[:, None] * (np.arange(2**bits)[None, :] - zero[:, None])


def nearest_codes(W: np.ndarray, codebook: np.ndarray) -> np.ndarray:
    """The index of the nearest codebook entry of each weight (``uint8 (m, n)``; ties: the lowest index)."""
    W = np.asarray(W, dtype=np.float64)
    out = np.empty(W.shape, dtype=np.uint8)
    for i0 in range(0, W.shape[0], 256):  # (rows, n, 2**bits) at a time
        d = np.abs(W[i0 : i0 + 256, :, None] - codebook[i0 : i0 + 256, None, :])
        out[i0 : i0 + 256] = d.argmin(axis=2)
    return out


def uniform_quantize(W: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Round-to-nearest on :func:`rtn_codebook`: ``(codebook, codes)``."""
    T = rtn_codebook(W, bits)
    return T, nearest_codes(W, T)


def layer_errors(W: np.ndarray, W_hat: np.ndarray, X: np.ndarray) -> float:
    """``||(W - W_hat) X||_F^2 / ||W X||_F^2``: the relative output error of one layer on inputs ``X`` (n x p)."""
    X = np.asarray(X, dtype=np.float64)
    num = np.linalg.norm((np.asarray(W, dtype=np.float64) - W_hat) @ X) ** 2
    den = np.linalg.norm(np.asarray(W, dtype=np.float64) @ X) ** 2
    return float(num / den)


# ----------------------------------------------------------------------------- the digits MLP


def _digits_split(seed: int, calibration: int) -> dict[str, np.ndarray]:
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    order = np.random.default_rng([seed, 64]).permutation(len(y))
    train, test = order[:1200], order[1200:]
    return {
        "Xtr": X[train],
        "ytr": y[train],
        "Xte": X[test],
        "yte": y[test],
        "calib": X[train[:calibration]],
    }


def _mlp_forward(
    params: list[tuple[np.ndarray, np.ndarray]], X: np.ndarray
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Logits and each layer's inputs (rows are samples) of the tanh MLP ``params = [(W, b), ...]``."""
    inputs, h = [], X
    for k, (W, b) in enumerate(params):
        inputs.append(h)
        h = h @ W.T + b
        if k < len(params) - 1:
            h = np.tanh(h)
    return h, inputs


def trained_mlp(
    seed: int, widths: tuple[int, ...], steps: int, lr: float, calibration: int
) -> dict[str, Any]:
    """:func:`train_mlp`, cached on disk (keyed by its arguments and this module's source)."""
    from bench.cache import cache_dir, cached_npz, source_digest

    key = f"mlp-{'-'.join(map(str, widths))}-t{steps}-lr{lr:g}-c{calibration}-s{seed}-{source_digest(__name__)}.npz"

    def compute() -> dict[str, np.ndarray]:
        net = train_mlp(seed, widths, steps, lr, calibration)
        flat = {k: v for k, v in net.items() if k != "params"}
        for k, (W, b) in enumerate(net["params"]):
            flat[f"W{k}"], flat[f"b{k}"] = W, b
        return flat

    flat = cached_npz(cache_dir("lut_quantization", "models") / key, compute)
    params = [(flat[f"W{k}"], flat[f"b{k}"]) for k in range(len(widths) - 1)]
    return {
        "params": params,
        **{k: v for k, v in flat.items() if k[0] not in "Wb" or not k[1:].isdigit()},
    }


def train_mlp(
    seed: int, widths: tuple[int, ...], steps: int, lr: float, calibration: int
) -> dict[str, Any]:
    """Train the digits MLP with full-batch Adam (numpy, float64), then round its weights to float32.

    Deterministic in its arguments: Glorot-uniform weights from
    ``numpy.random.default_rng([seed, 128])``, the split from ``[seed, 64]``.
    """
    d = _digits_split(seed, calibration)
    rng = np.random.default_rng([seed, 128])
    params = []
    for n_in, n_out in zip(widths[:-1], widths[1:], strict=True):
        a = math.sqrt(6.0 / (n_in + n_out))
        params.append((rng.uniform(-a, a, (n_out, n_in)), np.zeros(n_out)))
    Y = np.eye(widths[-1])[d["ytr"]]
    moments = [
        (np.zeros_like(W), np.zeros_like(W), np.zeros_like(b), np.zeros_like(b)) for W, b in params
    ]
    b1, b2, eps = 0.9, 0.999, 1e-8
    for t in range(1, steps + 1):
        logits, inputs = _mlp_forward(params, d["Xtr"])
        P = np.exp(logits - logits.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        g = (P - Y) / len(Y)
        grads = []
        for k in range(len(params) - 1, -1, -1):
            W, _ = params[k]
            grads.append((g.T @ inputs[k], g.sum(axis=0)))
            if k:
                g = (g @ W) * (1.0 - inputs[k] ** 2)
        grads.reverse()
        new = []
        for (W, b), (gW, gb), (mW, vW, mb, vb) in zip(params, grads, moments, strict=True):
            for m_, v_, g_ in ((mW, vW, gW), (mb, vb, gb)):
                m_ *= b1
                m_ += (1 - b1) * g_
                v_ *= b2
                v_ += (1 - b2) * g_**2
            c1, c2 = 1 - b1**t, 1 - b2**t
            new.append(
                (
                    W - lr * (mW / c1) / (np.sqrt(vW / c2) + eps),
                    b - lr * (mb / c1) / (np.sqrt(vb / c2) + eps),
                )
            )
        params = new
    params = [
        (W.astype(np.float32).astype(np.float64), b.astype(np.float32).astype(np.float64))
        for W, b in params
    ]
    return {"params": params, **d}


# ----------------------------------------------------------------------------- GPT-2


def _gpt2_weights(config: dict[str, Any], seed: int) -> dict[str, np.ndarray]:
    """GPT-2's initialisation drawn with numpy: N(0, 0.02) matrices and embeddings, the residual
    projections (``attn.c_proj``, ``mlp.c_proj``) scaled by ``1 / sqrt(2 n_layer)``, biases 0, LayerNorms 1 and 0.

    Keys and shapes are those of ``transformers.GPT2LMHeadModel.state_dict()`` (Conv1D weights are ``(in, out)``).
    """
    rng = np.random.default_rng([seed, 2])
    d, L, inner, V, P = (
        config["n_embd"],
        config["n_layer"],
        config["n_inner"],
        config["vocab_size"],
        config["n_positions"],
    )

    def normal(shape, std=INIT_STD):
        return (std * rng.standard_normal(shape)).astype(np.float32)

    w = {"transformer.wte.weight": normal((V, d)), "transformer.wpe.weight": normal((P, d))}
    proj_std = INIT_STD / math.sqrt(2 * L)
    for i in range(L):
        p = f"transformer.h.{i}."
        w[p + "ln_1.weight"], w[p + "ln_1.bias"] = np.ones(d, np.float32), np.zeros(d, np.float32)
        w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"] = (
            normal((d, 3 * d)),
            np.zeros(3 * d, np.float32),
        )
        w[p + "attn.c_proj.weight"], w[p + "attn.c_proj.bias"] = (
            normal((d, d), proj_std),
            np.zeros(d, np.float32),
        )
        w[p + "ln_2.weight"], w[p + "ln_2.bias"] = np.ones(d, np.float32), np.zeros(d, np.float32)
        w[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"] = (
            normal((d, inner)),
            np.zeros(inner, np.float32),
        )
        w[p + "mlp.c_proj.weight"], w[p + "mlp.c_proj.bias"] = (
            normal((inner, d), proj_std),
            np.zeros(d, np.float32),
        )
    w["transformer.ln_f.weight"], w["transformer.ln_f.bias"] = (
        np.ones(d, np.float32),
        np.zeros(d, np.float32),
    )
    return w


def gpt2_model(config: dict[str, Any], weights: dict[str, np.ndarray]):
    """A ``transformers.GPT2LMHeadModel`` (eager attention, eval mode, float32) holding ``weights``.

    ``transformers`` is imported here, on the task's side only; nothing is downloaded
    (``HF_HUB_OFFLINE=1``).
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    ends = config["vocab_size"] - 1  # GPT-2's default 50256 lies outside a small vocabulary
    cfg = GPT2Config(
        **config,
        bos_token_id=ends,
        eos_token_id=ends,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        tie_word_embeddings=True,
        attn_implementation="eager",
    )
    with torch.device("meta"):
        model = GPT2LMHeadModel(cfg)
    state = {k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in weights.items()}
    state["lm_head.weight"] = state["transformer.wte.weight"]
    model.load_state_dict(state, strict=False, assign=True)
    model.tie_weights()
    return model.eval()


def _gpt2_layers(config: dict[str, Any]) -> list[str]:
    return [
        f"transformer.h.{i}.{name}"
        for i in range(config["n_layer"])
        for name in ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")
    ]


def _zipf_tokens(rng: np.random.Generator, vocab: int, shape: tuple[int, int]) -> np.ndarray:
    p = 1.0 / np.arange(1, vocab + 1) ** ZIPF
    return rng.choice(vocab, size=shape, p=p / p.sum()).astype(np.int64)


def _gpt2_run(
    config: dict[str, Any], weights: dict[str, np.ndarray], tokens: np.ndarray
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Logits ``(sequences, positions, vocab)`` and each quantized layer's inputs ``(n, tokens)``."""
    import torch

    model = gpt2_model(config, weights)
    names = _gpt2_layers(config)
    captured: dict[str, np.ndarray] = {}
    modules = dict(model.named_modules())
    hooks = [
        modules[name].register_forward_hook(
            lambda mod, args, out, name=name: captured.__setitem__(
                name, args[0].detach().reshape(-1, args[0].shape[-1]).numpy().T.copy()
            )
        )
        for name in names
    ]
    with torch.no_grad():
        logits = model(torch.from_numpy(np.array(tokens))).logits.numpy().astype(np.float64)
    for h in hooks:
        h.remove()
    return logits, captured


# ----------------------------------------------------------------------------- the task


def _kl_agreement(ref_logits: np.ndarray, logits: np.ndarray) -> tuple[float, float]:
    """Mean ``KL(softmax(ref) || softmax(q))`` over positions, and the share of equal argmaxes."""
    a = ref_logits.reshape(-1, ref_logits.shape[-1])
    b = logits.reshape(-1, logits.shape[-1])
    la = a - a.max(axis=1, keepdims=True)
    la -= np.log(np.exp(la).sum(axis=1, keepdims=True))
    lb = b - b.max(axis=1, keepdims=True)
    lb -= np.log(np.exp(lb).sum(axis=1, keepdims=True))
    kl = float(np.mean(np.sum(np.exp(la) * (la - lb), axis=1)))
    return max(kl, 0.0), float(np.mean(a.argmax(axis=1) == b.argmax(axis=1)))


_TEMPLATE = """\
    # one entry per layer: a codebook of 2**bits values per row and the row's codes.
    # Round-to-nearest on each row's min-max grid is always valid.
    bits = int(instance.data["bits"])
    out = {}
    for name in instance.data["layers"]:
        W = np.asarray(instance.data["W/" + name])
        lo, hi = W.min(axis=1, keepdims=True), W.max(axis=1, keepdims=True)
        step = np.maximum((hi - lo) / (2**bits - 1), 1e-12)
        codebook = lo + step * np.arange(2**bits)
        codes = np.clip(np.rint((W - lo) / step), 0, 2**bits - 1).astype(np.uint8)
        out[name] = {"codebook": codebook, "codes": codes}
    return out
"""


@register_task
class LutQuantizationTask(CatalogTask):
    """Quantize every layer of a small model to ``b``-bit per-row lookup tables.

    ``instance.data``: ``bits``, ``layers`` (the names, in order), and per layer
    ``W/<name>`` (``float64 (m, n)``) and ``X/<name>`` (``float32 (n, p)``, the
    calibration inputs). A solution is a dict ``{name: {"codebook": (m, 2**bits)
    floats, "codes": (m, n) integers in [0, 2**bits)}}`` with every layer.
    """

    meta = TaskMeta(
        name="lut-quantization",
        version="1",
        family="lut_quantization",
        area="model compression",
        paper=Paper(
            title="GANQ: GPU-Adaptive Non-Uniform Quantization for Large Language Models",
            authors=["Pengxiang Zhao", "Xiaoming Yuan"],
            arxiv="2501.12956",
            venue="ICML 2025",
            code_url="https://github.com/Evans-Z/GANQ",
        ),
        description=(
            "Layer-wise b-bit lookup-table quantization (a codebook per row) of a digits MLP and a random-init "
            "GPT-2 config, scored on the layers' output error and on the quantized model's outputs."
        ),
        metrics=[
            Metric(
                name="layer_error",
                direction="min",
                description="mean over layers of ||(W - W_hat) X||^2 / ||W X||^2 on the calibration inputs (the objective)",
                rtol=1e-6,
            ),
            Metric(
                name="heldout_error",
                direction="min",
                description="the same on held-out inputs the method never sees",
                rtol=1e-6,
            ),
            Metric(
                name="kl",
                direction="min",
                description="every layer quantized at once: mean KL(full precision || quantized) of the output "
                "distributions on held-out inputs",
                rtol=1e-4,
            ),
            Metric(
                name="agreement",
                direction="max",
                description="share of held-out inputs (tokens) where the quantized model's top-1 output equals the full-precision one",
                rtol=1e-3,
            ),
            Metric(
                name="rtn_ratio",
                direction="min",
                description="layer_error / round-to-nearest's layer_error on the same instance",
                rtol=1e-6,
            ),
        ],
        primary="layer_error",
        normalization=Normalization(
            kind="linear",
            zero="rtn",
            one=0.0,
            description="1 - layer_error / rtn: 0 for round-to-nearest on the min-max grid, 1 for an exact layer",
        ),
        gap_reference="rtn",
        budgets={"smoke": 20.0, "standard": 300.0, "full": 3600.0},
    )
    template = _TEMPLATE
    catalog = CATALOG
    reference_cache = True

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        """The fields as parameters, and the model's kind as a tag."""
        return InstanceSpec(
            id=CATALOG.form.format(**fields),
            params=dict(fields),
            tags=("generated", MODELS[fields["model"]]["kind"]),
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``data``: the layers' weights and calibration inputs; ``private``: what the end-to-end check needs."""
        model, bits, seed = MODELS[fields["model"]], int(fields["bits"]), int(fields["seed"])
        data: dict[str, Any] = {"bits": bits}
        private: dict[str, Any] = {}
        if model["kind"] == "mlp":
            net = trained_mlp(
                seed, model["widths"], model["steps"], model["lr"], model["calibration"]
            )
            names = [f"fc{k + 1}" for k in range(len(net["params"]))]
            _, calib = _mlp_forward(net["params"], net["calib"])
            ref_logits, held = _mlp_forward(net["params"], net["Xte"])
            for name, (W, b), Xc, Xh in zip(names, net["params"], calib, held, strict=True):
                data["W/" + name] = W
                data["X/" + name] = Xc.T.astype(np.float32)
                private["H/" + name] = Xh.T.astype(np.float32)
                private["b/" + name] = b
            private["inputs"], private["labels"], private["logits"] = (
                net["Xte"],
                net["yte"],
                ref_logits,
            )
        else:
            config = model["config"]
            weights = _gpt2_weights(config, seed)
            rng = np.random.default_rng([seed, 3])
            calib = _zipf_tokens(
                rng, config["vocab_size"], (model["calibration"], config["n_positions"])
            )
            held = _zipf_tokens(
                rng, config["vocab_size"], (model["heldout"], config["n_positions"])
            )
            _, cx = _gpt2_run(config, weights, calib)
            ref_logits, hx = _gpt2_run(config, weights, held)
            names = _gpt2_layers(config)
            for name in names:
                data["W/" + name] = weights[name + ".weight"].T.astype(np.float64)
                data["X/" + name] = cx[name].astype(np.float32)
                private["H/" + name] = hx[name].astype(np.float32)
            private.update({"w/" + k: v for k, v in weights.items()})
            private["inputs"], private["logits"] = held, ref_logits
        data["layers"] = names
        return data, private

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        """Round-to-nearest's layer error (the normalization's zero) and the full-precision accuracy (mlp)."""
        bits, errs = int(data["bits"]), []
        for name in data["layers"]:
            W = data["W/" + name]
            errs.append(layer_errors(W, dequantize(*uniform_quantize(W, bits)), data["X/" + name]))
        refs = {
            "rtn": Reference(
                value=float(np.mean(errs)),
                source="round-to-nearest on each row's min-max grid of 2**bits levels",
            ),
        }
        if "labels" in private:
            acc = float(np.mean(private["logits"].argmax(axis=1) == private["labels"]))
            refs["fp_accuracy"] = Reference(
                value=acc, source="the full-precision MLP's accuracy on the held-out digits"
            )
        return refs

    def _check(self, instance: Instance, solution: Any) -> dict[str, np.ndarray]:
        data = instance.data
        bits, names = int(data["bits"]), list(data["layers"])
        if not isinstance(solution, dict):
            raise InvalidSolution(
                f"expected a dict {{layer name: {{'codebook', 'codes'}}}}, got {type(solution).__name__}"
            )
        missing, extra = (
            [n for n in names if n not in solution],
            [k for k in solution if k not in names],
        )
        if missing or extra:
            raise InvalidSolution(
                (f"missing layers {missing[:3]}" if missing else "") + (" and " if missing and extra else "")
                + (f"unknown layers {extra[:3]}" if extra else "") + f"; the layers are {names}"
            )  # fmt: skip
        out = {}
        for name in names:
            m, n = data["W/" + name].shape
            entry = solution[name]
            if not isinstance(entry, dict) or set(entry) != {"codebook", "codes"}:
                keys = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
                raise InvalidSolution(
                    f"layer {name!r}: expected exactly the keys 'codebook' and 'codes', got {keys}"
                )
            T, C = entry["codebook"], entry["codes"]
            if not isinstance(T, np.ndarray) or T.dtype.kind != "f" or T.shape != (m, 2**bits):
                what = f"{T.dtype} {T.shape}" if isinstance(T, np.ndarray) else type(T).__name__
                raise InvalidSolution(
                    f"layer {name!r}: 'codebook' must be a float array of shape ({m}, {2**bits}), got {what}"
                )
            if not np.all(np.isfinite(T)):
                i, j = np.argwhere(~np.isfinite(T))[0]
                raise InvalidSolution(
                    f"layer {name!r}: 'codebook' is not finite at row {i}, entry {j}"
                )
            if not isinstance(C, np.ndarray) or C.dtype.kind not in "iu" or C.shape != (m, n):
                what = f"{C.dtype} {C.shape}" if isinstance(C, np.ndarray) else type(C).__name__
                raise InvalidSolution(
                    f"layer {name!r}: 'codes' must be an integer array of shape ({m}, {n}), got {what}"
                )
            bad = (C < 0) | (C >= 2**bits)
            if bad.any():
                i, j = np.argwhere(bad)[0]
                raise InvalidSolution(
                    f"layer {name!r}: code {int(C[i, j])} at row {i}, column {j} is outside [0, {2**bits})"
                )
            out[name] = dequantize(T, C)
        return out

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Rebuild every ``W_hat`` from its codebook and codes and recompute every metric.

        Raises
        ------
        InvalidSolution
            Unless ``solution`` has exactly the instance's layers, each with a finite
            float ``codebook`` of shape ``(m, 2**bits)`` and integer ``codes`` of shape
            ``(m, n)`` in ``[0, 2**bits)``.
        """
        data, private = instance.data, instance.private
        W_hat = self._check(instance, solution)
        names = list(data["layers"])
        calib = [layer_errors(data["W/" + n], W_hat[n], data["X/" + n]) for n in names]
        held = [layer_errors(data["W/" + n], W_hat[n], private["H/" + n]) for n in names]
        model = MODELS[instance.params["model"]]
        if model["kind"] == "mlp":
            params = [(W_hat[n], private["b/" + n]) for n in names]
            logits, _ = _mlp_forward(params, private["inputs"])
        else:
            weights = {k[2:]: v for k, v in private.items() if k.startswith("w/")}
            for n in names:
                weights[n + ".weight"] = W_hat[n].T.astype(np.float32)
            logits, _ = _gpt2_run(model["config"], weights, private["inputs"])
        kl, agree = _kl_agreement(private["logits"], logits)
        err = float(np.mean(calib))
        return {
            "layer_error": err,
            "heldout_error": float(np.mean(held)),
            "kl": kl,
            "agreement": agree,
            "rtn_ratio": err / instance.references["rtn"].value,
        }
