"""Shared colour helpers for the colorizer tools (numpy + scikit-image only; no torch).

Conventions used by every script in tools/colorizer:
  * Lab is CIE L*a*b* of sRGB with a D65 white, exactly as skimage.color.rgb2lab computes it.
  * The network input is  x = L / 50 - 1  (L in [0, 100] -> x in [-1, 1]).
  * The network output is a, b in real Lab units (no scaling).
  * a/b is quantised on a 10-unit grid (bin centres at multiples of 10), as in
    Zhang, Isola & Efros, "Colorful Image Colorization", ECCV 2016.
"""
import numpy as np

GRID = 10.0          # a/b bin size
AB_MAX = 110.0       # bins span [-110, 110] in a and b


def in_gamut_bins(step_rgb=64):
    """Centres (Q, 2) of the a/b grid cells that some sRGB colour falls into (any L).

    This reproduces the idea of Zhang et al.'s 313 in-gamut bins; with skimage's D65 Lab
    the count comes out near 313.
    """
    from skimage.color import rgb2lab
    v = np.linspace(0.0, 1.0, step_rgb, dtype=np.float64)
    r, g, b = np.meshgrid(v, v, v, indexing="ij")
    rgb = np.stack([r, g, b], -1).reshape(-1, 1, 3)
    lab = rgb2lab(rgb).reshape(-1, 3)
    q = np.round(lab[:, 1:] / GRID).astype(np.int64)
    q = np.unique(q, axis=0)
    centres = q.astype(np.float32) * GRID
    # sort by (a, b) for a stable order
    order = np.lexsort((centres[:, 1], centres[:, 0]))
    return centres[order]


def nearest_bin(ab, centres):
    """ab (..., 2) -> index of nearest centre (...). Brute force, fine for a few million pixels."""
    flat = ab.reshape(-1, 2).astype(np.float32)
    out = np.empty(len(flat), np.int64)
    for s in range(0, len(flat), 1 << 18):
        d = ((flat[s:s + (1 << 18), None, :] - centres[None]) ** 2).sum(-1)
        out[s:s + (1 << 18)] = d.argmin(1)
    return out.reshape(ab.shape[:-1])


def rebalance_weights(counts, centres, lam=0.5, sigma=5.0):
    """Zhang et al. 2016 class rebalancing.

    p~ = empirical bin distribution smoothed with a Gaussian (sigma in ab units) over bin
    centres; w ∝ ((1 - lam) p~ + lam / Q)^-1, normalised so that sum_q p~_q w_q = 1.
    Returns (p_smoothed, weights).
    """
    p = counts.astype(np.float64) / max(counts.sum(), 1)
    d2 = ((centres[:, None, :] - centres[None, :, :]) ** 2).sum(-1)
    k = np.exp(-d2 / (2 * sigma ** 2))
    ps = k @ p
    ps /= ps.sum()
    q = len(centres)
    w = 1.0 / ((1 - lam) * ps + lam / q)
    w /= (ps * w).sum()
    return ps.astype(np.float32), w.astype(np.float32)


def colourfulness(rgb):
    """Hasler & Süsstrunk 2003 colourfulness M of an sRGB image with values in [0, 255]."""
    rgb = np.asarray(rgb, dtype=np.float64)
    R, G, B = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    rg = R - G
    yb = 0.5 * (R + G) - B
    return float(np.sqrt(rg.std() ** 2 + yb.std() ** 2) + 0.3 * np.sqrt(rg.mean() ** 2 + yb.mean() ** 2))
