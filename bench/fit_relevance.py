"""Fit the contenders' model of rag/answer/relevance.py (CONTENDER_WEIGHTS, CONTENDER_INTERCEPT)
on the list and summary questions of the tune question files, and report it cross-validated by
question file (each file's questions rated by a model fitted without them) against the score bar.

    .venv/bin/python bench/fit_relevance.py --home HOME_WITH_ALL_PAPERS [--bar 0.15]
                                            [--features FILE.npz]

Every list and summary question of bench/qa/tune*.jsonl (never test.jsonl) is answered with the
extractive backend; each decision's contenders and their features are recorded (a paper is
labelled on topic when it is one of the question's gold papers). The features are saved to
--features and read from there on a second run. Prints the weights to copy into relevance.py.
A list cites at most 25 papers, a summary 10 (MAX_LISTED, MAX_SUMMARIZED).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CAPS = {"list": 25, "summary": 10}


def record(home: Path) -> dict[str, Any]:
    """Each tune list/summary question's contenders: features, labels, passes, question file."""
    os.environ.update(PAPERTALK_HOME=str(home), HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    import rag.answer.chain as chain
    from rag.answer.relevance import contender_features
    from rag.eval.dataset import load_qa
    from rag.settings import load_settings

    seen: list[tuple[Any, ...]] = []
    rate = chain.rate_contenders

    def spy(decision: Any, titles: Any, vectors: Any) -> Any:
        seen.append((decision, titles, vectors))
        return rate(decision, titles, vectors)

    chain.rate_contenders = spy  # type: ignore[assignment]
    answerer = chain.Answerer(load_settings(llm="extractive"), llm_spec="extractive")
    rows: list[np.ndarray] = []
    labels: list[np.ndarray] = []
    passes: list[np.ndarray] = []
    groups: list[str] = []
    kinds: list[str] = []
    golds: list[int] = []
    for path in sorted((REPO / "bench" / "qa").glob("tune*.jsonl")):
        for item in load_qa(path):
            if item.type not in CAPS:
                continue
            seen.clear()
            answerer.answer(item.question, history=list(item.history))
            usable = [s for s in seen if s[0].contenders]
            if len(usable) != 1:  # no contender, or several topics in one question
                continue
            decision, titles, vectors = usable[0]
            contenders, x = contender_features(decision, titles, vectors)
            rows.append(x)
            labels.append(np.array([j.hit.paper_id in item.gold for j in contenders]))
            passes.append(np.array([j.passes for j in contenders]))
            groups.append(path.stem)
            kinds.append(item.type)
            golds.append(len(set(item.gold)))
            print(item.qid, len(contenders), file=sys.stderr, flush=True)
    return {
        "rows": np.array(rows, dtype=object),
        "labels": np.array(labels, dtype=object),
        "passes": np.array(passes, dtype=object),
        "groups": np.array(groups),
        "kinds": np.array(kinds),
        "golds": np.array(golds),
    }


def scores(chosen: list[np.ndarray], data: dict[str, Any], kind: str) -> tuple[float, float]:
    """Mean precision (over questions that list a paper) and recall of the chosen papers."""
    precision, recall = [], []
    for i, keep in enumerate(chosen):
        if data["kinds"][i] != kind:
            continue
        hits = int(data["labels"][i][keep].sum())
        if len(keep):
            precision.append(hits / len(keep))
        recall.append(hits / data["golds"][i])
    return float(np.mean(precision)), float(np.mean(recall))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--bar", type=float, default=0.15)
    parser.add_argument("--features", type=Path, default=Path("/tmp/papertalk-relevance.npz"))
    args = parser.parse_args()
    from sklearn.linear_model import LogisticRegression

    from rag.answer.relevance import MAX_RATED

    if args.features.exists():
        data = dict(np.load(args.features, allow_pickle=True))
    else:
        data = record(args.home)
        np.savez(args.features, **data)

    def fit(index: list[int]) -> Any:
        x = np.vstack([data["rows"][i] for i in index])
        y = np.concatenate([data["labels"][i] for i in index])
        return LogisticRegression(C=1.0, max_iter=3000).fit(x, y)

    n = len(data["rows"])
    rated: list[np.ndarray] = [np.zeros(0)] * n
    for group in sorted(set(data["groups"])):
        model = fit([i for i in range(n) if data["groups"][i] != group])
        for i in range(n):
            if data["groups"][i] == group:
                rated[i] = model.predict_proba(data["rows"][i])[:, 1]

    def by_rating(i: int) -> np.ndarray:
        if not 0 < data["passes"][i].sum() <= MAX_RATED:  # unrated, as in relevance.py
            return by_score(i)
        order = np.argsort(-rated[i], kind="stable")
        keep = order[rated[i][order] >= args.bar]
        if not len(keep) and data["passes"][i].any():
            keep = order[:1]
        return keep[: CAPS[data["kinds"][i]]]

    def by_score(i: int) -> np.ndarray:  # contenders are in score order
        return np.flatnonzero(data["passes"][i])[: CAPS[data["kinds"][i]]]

    print(f"{n} questions; cross-validated by question file")
    for kind in CAPS:
        before = scores([by_score(i) for i in range(n)], data, kind)
        after = scores([by_rating(i) for i in range(n)], data, kind)
        print(f"{kind}: score bar {before[0]:.3f} / {before[1]:.3f}", end=" ")
        print(f"-> rated {after[0]:.3f} / {after[1]:.3f}")
    model = fit(list(range(n)))
    print("CONTENDER_WEIGHTS = (" + ", ".join(f"{w:.3f}" for w in model.coef_[0]) + ")")
    print(f"CONTENDER_INTERCEPT = {model.intercept_[0]:.3f}")


if __name__ == "__main__":
    main()
