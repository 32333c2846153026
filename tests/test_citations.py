"""Citation parsing, renumbering, attribution and support labels (pure functions)."""

from __future__ import annotations

from collections.abc import Sequence

from rag.answer.citations import (
    SUPPORTED,
    UNSUPPORTED,
    WEAK,
    EmbeddingSimilarity,
    numbers_missing,
    parse_marker_numbers,
    render_sentence,
    resolve_citations,
    split_cited_sentences,
)


def word_overlap(sentence: str, passage: Sequence[str]) -> float:
    words = set(sentence.lower().replace(".", "").split())
    best = 0.0
    for p in passage:
        other = set(p.lower().replace(".", "").split())
        best = max(best, len(words & other) / max(1, len(words)))
    return best


PASSAGES = [
    ["Cake cuts time to first token by 2.6x."],
    ["D-Fusion builds visually consistent samples for DPO."],
    ["Cake balances compute and loading of the KV cache."],
]
PAPERS = ["cake", "dfusion", "cake"]


def test_marker_forms() -> None:
    assert parse_marker_numbers("1, 3") == [1, 3]
    assert parse_marker_numbers("2-4") == [2, 3, 4]
    assert parse_marker_numbers("1 and 2") == [1, 2]
    assert parse_marker_numbers("5-1") == []
    pieces = split_cited_sentences("A is true [1][2]. B holds [3, 1]. [2] C too.")
    assert pieces == [("A is true.", [1, 2]), ("B holds.", [3, 1, 2]), ("C too.", [])]


def test_out_of_range_markers_are_dropped_and_refs_renumbered() -> None:
    answer = "D-Fusion builds consistent samples [2]. Cake cuts time to first token [9][1]."
    result = resolve_citations(answer, PASSAGES, PAPERS, word_overlap)
    assert result.dropped_markers == [9]
    assert [s.passages for s in result.sentences] == [[2], [1]]
    # First appearance decides: D-Fusion is reference 1, Cake reference 2.
    assert result.passage_to_ref == {2: 1, 1: 2}


def test_passages_of_one_paper_share_a_reference() -> None:
    answer = "Cake cuts time to first token [1]. Cake balances compute and loading [3]."
    result = resolve_citations(answer, PASSAGES, PAPERS, word_overlap)
    assert result.passage_to_ref[1] == result.passage_to_ref[3] == 1


def test_uncited_sentences_are_attributed_above_a_threshold() -> None:
    answer = "Cake balances compute and loading of the KV cache. Bananas are yellow."
    result = resolve_citations(answer, PASSAGES, PAPERS, word_overlap)
    first, second = result.sentences
    assert first.passages == [3] and first.attributed
    assert second.passages == [] and not second.attributed
    assert second.support == UNSUPPORTED


def test_support_labels() -> None:
    answer = (
        "Cake cuts time to first token by 2.6x [1]. Cake cuts time to serve chat users [1]. "
        "Pears [2]."
    )
    result = resolve_citations(answer, PASSAGES, PAPERS, word_overlap)
    assert [s.support for s in result.sentences] == [SUPPORTED, WEAK, UNSUPPORTED]


def test_render_sentence_places_markers_before_the_period() -> None:
    assert render_sentence("Cake is fast.", [1, 2]) == "Cake is fast [1][2]."
    assert render_sentence("Cake is fast", [1]) == "Cake is fast [1]"
    assert render_sentence("No refs.", []) == "No refs."


def test_invented_numbers_cap_support() -> None:
    assert numbers_missing("It cuts TTFT by 5x.", ["It cuts TTFT by 2.6x."])
    assert not numbers_missing("It cuts TTFT by 2.6x.", ["It cuts TTFT by 2.6x on average."])
    import numpy as np

    def embed(texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 3)) / np.sqrt(3)  # everything looks identical

    similarity = EmbeddingSimilarity(embed)
    assert similarity("It cuts TTFT by 5x.", ["It cuts TTFT by 2.6x."]) <= 0.55
    assert similarity("It cuts TTFT by 2.6x.", ["It cuts TTFT by 2.6x."]) == 1.0


def test_echoed_titles_are_removed_before_sentence_splitting() -> None:
    from rag.answer.modes.ask import strip_echoed_titles

    title = "Compute or Load KV Cache? Why Not Both?"
    raw = f'[1] "{title}": Cake cuts time to first token by 2.6x [1].'
    cleaned = strip_echoed_titles(raw, [title])
    assert title not in cleaned
    pieces = split_cited_sentences(cleaned)
    assert pieces == [("Cake cuts time to first token by 2.6x.", [1, 1])]


def test_a_generated_sentence_about_another_paper_than_the_one_asked_is_removed() -> None:
    answer = "Cake cuts time to first token by 2.6x [1]. D-Fusion builds consistent samples [2]."
    kept = resolve_citations(answer, PASSAGES, PAPERS, word_overlap, generated=True)
    assert [s.passages for s in kept.sentences] == [[1], [2]]
    asked = resolve_citations(
        answer, PASSAGES, PAPERS, word_overlap, generated=True, asked_papers=["cake"]
    )
    assert [s.passages for s in asked.sentences] == [[1]]
    assert asked.removed == [
        'Removed "D-Fusion builds consistent samples.": it is about another paper.'
    ]
    # Quoted (not generated) text is never removed for it.
    quoted = resolve_citations(answer, PASSAGES, PAPERS, word_overlap, asked_papers=["cake"])
    assert len(quoted.sentences) == 2


def test_on_a_question_about_one_paper_a_sentence_citing_it_keeps_only_its_markers() -> None:
    answer = "Cake cuts time to first token by 2.6x [1][2]."
    asked = resolve_citations(
        answer, PASSAGES, PAPERS, word_overlap, generated=True, asked_papers=["cake"]
    )
    assert [s.passages for s in asked.sentences] == [[1]]
    assert asked.removed == []
    # Without a paper asked about, every marker stays.
    free = resolve_citations(answer, PASSAGES, PAPERS, word_overlap, generated=True)
    assert [s.passages for s in free.sentences] == [[1, 2]]
    # A sentence only the other paper's passage supports goes with it.
    other = "D-Fusion builds visually consistent samples [1][2]."
    gone = resolve_citations(
        other, PASSAGES, PAPERS, word_overlap, generated=True, asked_papers=["cake"]
    )
    assert gone.sentences == [] and "no cited passage supports it" in gone.removed[0]
