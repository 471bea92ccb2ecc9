"""The figures of the Sha et al. (2002) reproduction (matplotlib, imported when drawn)."""

from __future__ import annotations

import numpy as np

__all__ = ["draw_figure", "draw_figure2"]


def draw_figure(decay: dict, path: str) -> None:
    """Fig. 1: one panel per iteration, coefficients against training examples."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    its = decay["iterations"]
    fig, axes = plt.subplots(len(its), 1, figsize=(7, 1.2 * len(its)), sharex=True)
    axes = np.atleast_1d(axes)
    x = np.arange(decay["n_train"])
    top = float(np.max(decay["alpha"][1:])) * 1.05 if len(its) > 1 else 1.5
    for ax, it, a, et, eg in zip(axes, its, decay["alpha"], decay["train_error"], decay["test_error"],
                                 strict=True):
        ax.bar(x, a, width=1.0, color="tab:blue")
        ax.axvline(decay["n_support"] - 0.5, color="grey", lw=0.8, ls="--")
        ax.set_ylim(0, max(top, 1.05) if it == 0 else top)
        ax.set_ylabel(f"{it:02d}", rotation=0, labelpad=12, va="center")
        ax.text(1.01, 0.5, f"ε_t {et:.1f}%  ε_g {eg:.1f}%", transform=ax.transAxes, va="center", fontsize=8)
        ax.set_yticks([])
    axes[0].set_title("M3 coefficients α_i after k updates (breast cancer, RBF σ = 3);\n"
                      f"support vectors ({decay['n_support']}) left of the dashed line", fontsize=9)
    axes[-1].set_xlabel("training examples")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def draw_figure2(th: dict, path: str) -> None:
    """Fig. 2 measured: distances to the hyperplane, and γ_i against the bound of eq. (9)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(13, 3.8))
    ratio = th["d_i"] / th["d"]
    sv = th["support_mask"]
    bins = np.linspace(1.0, max(float(ratio.max()), 1.01), 40)
    ax1.hist([ratio[sv], ratio[~sv]], bins=bins, stacked=True, color=["black", "lightgrey"],
             label=[f"support vectors ({int(sv.sum())})", f"non-support vectors ({int((~sv).sum())})"])
    ax1.set_xlabel("d_i / d (distance to the hyperplane in margins)")
    ax1.set_ylabel("training examples")
    ax1.legend(fontsize=8)
    ax1.set_title("feature-space distances (Fig. 2's d_i, d)", fontsize=9)
    r = ratio[th["non_support"]]
    order = np.argsort(r)
    ax2.semilogy(r[order], 1 - th["bound"][order], "-", color="tab:red", label="1 − bound, eq. (9)")
    ax2.semilogy(r, 1 - th["gamma"], "o", ms=4, mfc="none", color="tab:blue", label="1 − γ_i, eq. (8) at α*")
    ok = np.isfinite(th["run_rate"])
    ax2.semilogy(r[ok], 1 - th["run_rate"][ok], "x", ms=3, color="tab:green",
                 label=f"1 − measured decay, updates {th['iterations'] // 2}–{th['iterations']}")
    ax2.set_xlabel("d_i / d")
    ax2.set_ylabel("1 − decay factor per update")
    ax2.legend(fontsize=8)
    ax2.set_title("Theorem 2: non-support coefficients (bound: red line below)", fontsize=9)
    gap = th["objective_gap"]
    ax3.semilogy(np.arange(gap.size), np.maximum(gap, 1e-16), color="tab:purple")
    ax3.set_xlabel("update")
    ax3.set_ylabel("F(α_t) − F(α*)")
    ax3.set_title("objective gap along the run", fontsize=9)
    fig.suptitle("Breast cancer, RBF σ = 3, split seed 0", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
