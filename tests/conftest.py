"""Shared data for the tests: real (scikit-learn's WDBC) and generated."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp


def make_classification(n: int = 80, d: int = 6, *, seed: int = 0, sparse: bool = False, density: float = 0.3):
    """Two overlapping Gaussian classes with labels in {0, 1} (not separable)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    w_true = rng.normal(size=d)
    X = rng.normal(size=(n, d)) + 0.8 * np.outer(2 * y - 1, w_true) / np.linalg.norm(w_true)
    if sparse:
        mask = rng.random((n, d)) < density
        X = sp.csr_matrix(X * mask)
    return X, y


def standardized(name: str, n: int | None = None, seed: int = 0):
    """A data set from the package's loaders, standardized, optionally ``n`` rows drawn without replacement."""
    from robustsvm.datasets import load

    X, y, _ = load(name)
    sd = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    if n is not None and n < X.shape[0]:
        rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], size=n, replace=False))
        X, y = X[rows], y[rows]
    return X, y


def ellipsoid_shape(d: int, seed: int = 0) -> np.ndarray:
    """A random symmetric positive definite shape matrix with eigenvalues in [0.3, 1.5]."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return (Q * rng.uniform(0.3, 1.5, size=d)) @ Q.T


def mixed_signs(d: int) -> np.ndarray:
    """+1 on the first third of the features, −1 on the next sixth, free on the rest."""
    s = np.zeros(d, dtype=int)
    s[: d // 3] = 1
    s[d // 3: d // 2] = -1
    return s


@pytest.fixture(scope="session")
def wdbc():
    """Standardized Wisconsin diagnostic breast cancer data (569 × 30) and names."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    X = (data.data - data.data.mean(axis=0)) / data.data.std(axis=0)
    return X, data.target, [str(n) for n in data.feature_names]


@pytest.fixture
def small():
    return make_classification(60, 5, seed=1)


@pytest.fixture
def count_products(monkeypatch):
    """Count the products with X (``matvec``) and Xᵀ (``rmatvec``) made by the first-order backends."""
    from robustsvm.backends._linalg import Design

    calls = {"matvec": 0, "rmatvec": 0}
    for name in calls:
        original = getattr(Design, name)

        def counted(self, v, _name=name, _original=original):
            calls[_name] += 1
            return _original(self, v)

        monkeypatch.setattr(Design, name, counted)
    return calls

#: test modules of end-to-end work (subprocesses, notebooks, the docs site, reproductions, a Dask cluster)
SLOW_MODULES = frozenset({
    "tests/adversarial/test_sweep.py",
    "tests/test_bench.py",
    "tests/test_cli.py",
    "tests/test_cli_commands.py",
    "tests/test_dask.py",
    "tests/test_doc_snippets.py",
    "tests/test_docs.py",
    "tests/test_notebooks.py",
    "tests/test_reproduce_sha2002.py",
    "tests/test_reproduce_tajima2020.py",
    "tests/test_reproduce_woolnough2022.py",
})
#: the heaviest cross-checks of the other modules (about a second or more each)
SLOW_TESTS = frozenset({
    "tests/adversarial/test_certificates.py::test_first_order_points_satisfy_signs_and_gaps_bound_the_distance",
    "tests/adversarial/test_certificates.py::test_m3_hard_margin_separable_point_is_feasible_and_certified",
    "tests/adversarial/test_certificates.py::test_scs_sonar_polyhedron_with_per_sample_radii",
    "tests/adversarial/test_support_functions.py::test_numeric_sets_at_every_scale",
    "tests/test_conic.py::test_fold_groups_equal_refit",
    "tests/test_conic.py::test_l1_l2_signs_intercept_three_ways",
    "tests/test_conic.py::test_matches_liblinear_without_intercept",
    "tests/test_dcd.py::test_agrees_with_clarabel",
    "tests/test_dcd.py::test_frozen_features_keep_the_certificate",
    "tests/test_dcd.py::test_sparse_is_never_densified",
    "tests/test_dcd.py::test_weighted_quantile_matches_the_sorted_definition",
    "tests/test_duals.py::test_linear_kernel_dual_matches_primal",
    "tests/test_duals.py::test_sign_constrained_dual_matches_primal",
    "tests/test_estimator.py::test_check_estimator_passes",
    "tests/test_estimator.py::test_check_estimator_with_a_cone_model",
    "tests/test_estimator.py::test_docs_estimator_examples_run",
    "tests/test_estimator.py::test_kernel_model_matches_direct_cvxpy_dual_free_form",
    "tests/test_frank_wolfe.py::test_agrees_with_clarabel",
    "tests/test_frank_wolfe.py::test_compare_table_lists_frank_wolfe_near_the_reference",
    "tests/test_frank_wolfe.py::test_history_is_monotone_in_the_dual_and_complete",
    "tests/test_frank_wolfe.py::test_line_search_matches_grid_search",
    "tests/test_frank_wolfe.py::test_sample_weights_with_zeros_and_intercept",
    "tests/test_frank_wolfe.py::test_sparse_input_is_never_densified",
    "tests/test_io.py::test_every_set_type_round_trips_with_the_same_support",
    "tests/test_kernels.py::test_linear_kernel_model_equals_linear_model",
    "tests/test_m3.py::test_hard_margin_linear_reaches_clarabel",
    "tests/test_m3.py::test_objective_never_increases",
    "tests/test_m3.py::test_slow_case_stops_short_and_says_so",
    "tests/test_m3.py::test_soft_margin_kernel_matches_clarabel",
    "tests/test_model_selection.py::test_core_import_needs_no_optional_dependency",
    "tests/test_model_selection_scoring.py::test_probability_scorers_equal_gridsearchcv_with_platt_on_training_folds",
    "tests/test_model_selection_scoring.py::test_weighted_folds_in_processes_equal_the_serial_search",
    "tests/test_model_selection.py::test_fold_masks_equal_refitting_each_fold",
    "tests/test_model_selection.py::test_joblib_gives_exactly_the_serial_results",
    "tests/test_model_selection.py::test_reproduce_woolnough2022_prints_table_1",
    "tests/test_model_selection.py::test_scs_warm_start_and_pq_backend_agree_with_clarabel",
    "tests/test_ordering_priors.py::test_keel_orderings_agree_with_the_written_out_cvxpy_model",
    "tests/test_pegasos.py::test_agrees_with_clarabel",
    "tests/test_pq.py::test_paper_alpha_search_and_divergence",
    "tests/test_pq.py::test_pq_defaults_reach_clarabel",
    "tests/test_pq.py::test_pq_matches_cvxpy_primal_on_real_data",
    "tests/test_robust_dcd.py::test_keel_agrees_with_clarabel",
    "tests/test_robust_dcd.py::test_loose_gap_still_bounds_the_true_excess",
    "tests/test_robust_dcd.py::test_per_sample_radii_and_weights",
    "tests/test_robust_dcd.py::test_wdbc_agrees_with_clarabel",
    "tests/test_robust_models.py::test_per_sample_ellipsoids_and_polyhedra_batched",
    "tests/test_robust_models.py::test_per_sample_sets_differ_squared_hinge_sum",
    "tests/test_robust_models.py::test_spectrahedron_against_the_papers_per_sample_sdp",
    "tests/test_uncertainty_sets.py::test_support_equals_cvxpy_maximum_and_worst_case_attains_it",
})


def pytest_collection_modifyitems(config, items):
    """Mark the tests above ``slow``: ``pytest -m "not slow"`` is the daily lane, ``make test`` runs all."""
    for item in items:
        module = item.nodeid.split("::")[0]
        if module in SLOW_MODULES or item.nodeid.split("[")[0] in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
