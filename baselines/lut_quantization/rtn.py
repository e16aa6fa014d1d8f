"""rtn: round-to-nearest on each row's uniform min-max grid (the trivial reference).

Every weight goes to the nearest of the ``2**b`` levels of GPTQ's per-channel
asymmetric quantizer (range ``[min(w_min, 0), max(w_max, 0)]``, an integer
zero point), with no use of the calibration inputs: the "RTN" row of the GPTQ
and GANQ tables. The task's ``rtn`` reference is this baseline's error, so it
scores 0 on the normalised scale.

Reference: Frantar et al., GPTQ (ICLR 2023), its ``Quantizer`` with
``perchannel=True, sym=False`` (read, not copied).
"""

from __future__ import annotations

from bench import method
from tasks.lut_quantization import uniform_quantize

__all__ = ["solve"]


@method(
    name="rtn",
    kind="baseline",
    tasks=["lut-quantization"],
    reference="round-to-nearest on GPTQ's per-channel asymmetric min-max grid (Frantar et al., ICLR 2023)",
    version="1",
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float) -> dict:
    """Each layer rounded to its rows' min-max grids."""
    bits = int(instance.data["bits"])
    out = {}
    for name in instance.data["layers"]:
        T, codes = uniform_quantize(instance.data["W/" + name], bits)
        out[name] = {"codebook": T, "codes": codes}
    return out
