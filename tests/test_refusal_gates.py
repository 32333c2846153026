"""The gates that decide whether the papers state what a question asks for: a named instance of a
kind ("which datasets"), a measured value ("what top-1 accuracy"), and names written in another
form. General cases with made-up papers, then the real bundled store and models."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from rag.answer.chain import Answerer
from rag.answer.context import ContextPassage, Sentence, TermWeights
from rag.answer.intent import small_talk
from rag.answer.refusal import (
    ACCLAIM_REASON,
    CANNOT_ANSWER,
    DESCRIBED_MEANING,
    NEAR_MEASURE,
    NO_SUBJECT_REASON,
    SMALL_TALK_REASON,
    USAGE_REASON,
    asked_phrases,
    asks_amount,
    asks_for_acclaim,
    asks_own_limits,
    asks_usage_ranking,
    check_answerable,
    compared_names,
    counted_things,
    coverage,
    defines_instance,
    given_count,
    instance_names,
    measured_things,
    named_kinds,
    names_no_subject,
    phrase_terms,
    reported_for,
    states_instance,
    states_own_limit,
    topic_terms,
    unmentioned_name,
)
from rag.records import PaperHit
from rag.retrieve.hybrid import SearchFilters
from rag.text.latex import without_math
from rag.text.names import name_base, query_names
from rag.text.questions import asking_parts, with_parts
from rag.text.terms import tokenize


def _weights() -> TermWeights:
    return TermWeights(tokenize, {}, 100)


def _verdict(
    question: str,
    abstract: str,
    title: str = "Fast retrieval with FooNet",
    selected: str = "",
    **options: Any,
) -> Any:
    """The verdict on `abstract`, of which the context holds `selected` (all of it if empty);
    `options` go to `check_answerable` (`asked`, `followup`)."""
    hit = PaperHit("p1", title, [], "", "", 1.0)
    text = selected or abstract
    passage = ContextPassage(1, hit, [Sentence(text, 0, len(text), 1.0)])
    return check_answerable(
        question,
        [passage],
        _weights(),
        min_coverage=0.0,
        subject_names=["FooNet"],
        abstracts={"p1": abstract},
        subject_papers=["p1"],
        **options,
    )


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("Which retrieval benchmarks is FooNet evaluated on?", [("retrieval", "benchmarks")]),
        ("On which datasets do they test it?", [("", "datasets")]),
        ("What large language model does FooNet call?", [("large", "language model")]),
        ("Which datasets and encoders are used?", [("", "datasets")]),
        ("In which environments were the experiments run?", [("", "environments")]),
        ("Which VLMs does FooNet pick most often?", [("", "VLMs")]),
        # An aside between the kind and its verb leaves the kind asked for.
        ("Which LLMs (and at what scale) does FooNet distil?", [("", "LLMs")]),
        # Coordinated modifiers narrow one kind.
        (
            "Which vision and audio datasets is FooNet tested on?",
            [("vision and audio", "datasets")],
        ),
        ("Which vision-language models is it tested with?", [("", "vision-language models")]),
        (
            "On which pathology slide collections was it tested?",
            [("pathology slide", "collections")],
        ),
        # The kind is the subject of its own verb: the question asks which paper.
        ("Which benchmark tests whether agents can cheat?", []),
        # The question word asks for a paper; the kind comes later.
        ("Which paper uses LLMs and why?", []),
        ("What is the dataset size?", []),
    ],
)
def test_which_named_kind_a_question_asks_for(question: str, kinds: list[tuple[str, str]]) -> None:
    assert named_kinds(question) == kinds


@pytest.mark.parametrize(
    ("question", "named", "unnamed", "reason"),
    [
        # A kind the abstract only counts is not named.
        (
            "Which retrieval benchmarks is FooNet evaluated on?",
            "FooNet is fast. Experiments on SciDocs and TREC-COVID show gains.",
            "FooNet is fast. Experiments on several retrieval benchmarks help.",
            "name the benchmarks",
        ),
        # A kind answered by a name need not be written.
        (
            "In which city does FooNet study traffic?",
            "FooNet studies how road works drive traffic in Lyon.",
            "FooNet studies how road works drive traffic worldwide.",
            "city",
        ),
        # A name answers the words that narrow its kind ("image").
        (
            "Which image datasets is FooNet tested on?",
            "FooNet is fast. Experiments on FooSet-10 and BarSet show gains.",
            "FooNet is fast. Experiments on image datasets show gains.",
            "name the datasets",
        ),
    ],
)
def test_a_named_kind_is_answered_by_a_name_only(
    question: str, named: str, unnamed: str, reason: str
) -> None:
    verdict = _verdict(question, named)
    assert verdict.answerable, verdict.reason
    refused = _verdict(question, unnamed)
    assert not refused.answerable and reason in refused.reason


def test_a_short_form_or_the_papers_own_name_is_not_an_instance() -> None:
    question = "Which graph benchmarks is FooNet evaluated on?"
    abstract = (
        "We study graph neural networks (GNNs). FooNet runs GNNs with a cache, BarIndex. "
        "Experiments on several graph benchmarks show that FooNet generalizes to unseen GNNs."
    )
    verdict = _verdict(question, abstract, title="BarIndex: reasoning over graphs")
    assert not verdict.answerable and "name the benchmarks" in verdict.reason


@pytest.mark.parametrize(
    ("question", "measured"),
    [
        ("What top-5 error does FooNet reach on ImageNet?", ["top-5 error"]),
        ("What speedup does FooNet give?", ["speedup"]),
        ("Which score function does FooNet use?", []),  # the head noun is "function"
        ("Which encoder does FooNet use?", []),
    ],
)
def test_what_measured_value_a_question_asks_for(question: str, measured: list[str]) -> None:
    assert measured_things(question) == measured


def test_a_measured_value_must_be_stated_as_a_number_with_the_measure() -> None:
    question = "What top-5 error does FooNet reach?"
    unstated = _verdict(question, "FooNet lowers top-5 error on four datasets.")
    assert not unstated.answerable and "top-5 error" in unstated.reason
    stated = _verdict(question, "FooNet reaches 7.2% top-5 error on ImageNet.")
    assert stated.answerable, stated.reason


def test_a_descriptive_compound_is_the_name_it_is_built_on() -> None:
    names = query_names("Does a CNN-driven agent beat a Mamba-based one, as D-Fusion claims?")
    assert [name_base(n) for n in names] == ["CNN", "Mamba", "D-Fusion"]
    question = "What does FooNet reach against the best CNN-driven agent?"
    verdict = _verdict(question, "FooNet, a CNN agent, wins 76% of games against CNN agents.")
    assert verdict.answerable, verdict.reason


@pytest.mark.parametrize(
    ("question", "abstract", "mentioned"),
    [
        # written without its hyphen, or with a space: the same name
        (
            "What perplexity does FooNet reach on FooText-2?",
            "Its perplexity is 6.6 on footext2.",
            True,
        ),
        (
            "What perplexity does FooNet reach on FooText-2?",
            "Its perplexity is 6.6 on footext3.",
            False,
        ),
        ("What does FooNet-3 report on long inputs?", "FooNet 3 handles long inputs.", True),
        # its parts must stand together: not "FooNet" and a "3" elsewhere
        (
            "What does FooNet-3 report on long inputs?",
            "FooNet reads long inputs in 3 steps.",
            False,
        ),
    ],
)
def test_how_a_hyphenated_name_is_mentioned(question: str, abstract: str, mentioned: bool) -> None:
    verdict = _verdict(question, abstract)
    if mentioned:
        assert verdict.answerable, verdict.reason
    else:
        name = question.split(" on ")[-1].rstrip("?") if "FooText" in question else "FooNet-3"
        assert not verdict.answerable and name in verdict.reason, verdict.reason


def test_a_name_before_the_asked_kinds_head_names_an_instance_of_it() -> None:
    question = "Which combinatorial dimension controls the sample cost of FooNet?"
    named = _verdict(question, "The sample cost of FooNet is set by the finite Barlow dimension.")
    assert named.answerable, named.reason
    unnamed = _verdict(question, "The sample cost of FooNet grows with the dimension.")
    assert not unnamed.answerable and "combinatorial dimension" in unnamed.reason
    # The question's own words are no new name.
    echoed = _verdict(
        "Which combinatorial dimension bounds the sample cost of FooNet?",
        "FooNet bounds its sample cost by the FooNet dimension.",
    )
    assert not echoed.answerable


def test_a_degree_adverb_ends_the_asked_phrase() -> None:
    assert asked_phrases("Which loss weights best suit small budgets?") == ["loss weights"]


def test_adverb_graded_adjectives_only_narrow_the_asked_kind() -> None:
    # "freely available datasets" asks for datasets (counted elsewhere), not for the words
    # "freely available": an abstract writes "public datasets".
    question = "On how many freely available datasets was FooNet evaluated?"
    assert asked_phrases(question, ["FooNet"]) == []
    assert counted_things(question, ["FooNet"]) == []
    assert asked_phrases("Which publicly available models does FooNet use?", ["FooNet"]) == []
    # A noun before the kind is still asked for.
    assert asked_phrases("Which vision datasets does FooNet use?", ["FooNet"]) == ["vision"]


def _near_by_table(said: dict[str, tuple[str, float]]) -> Any:
    """A `NearWords` from a table: word asked -> (the text's word for it, their similarity);
    the answerer's own bar is 0.5."""

    def near(words: Any, text: str, bar: float | None = None) -> set[str]:
        return {
            w
            for w in words
            if w in said and said[w][0] in text and said[w][1] >= (0.5 if bar is None else bar)
        }

    return near


def test_a_measure_must_be_said_by_a_close_word() -> None:
    # word asked -> (the text's word for it, their similarity)
    said: dict[str, tuple[str, float]] = {"accuracy": ("performance", 0.52)}
    near = _near_by_table(said)

    loose = "FooNet leads to strong performance across 73 tasks."
    verdict = _verdict("What accuracy does FooNet reach?", loose, near=near)
    assert not verdict.answerable and "accuracy" in verdict.reason
    said["accuracy"] = ("performance", NEAR_MEASURE)  # as close as a measure must be
    assert _verdict("What accuracy does FooNet reach?", loose, near=near).answerable
    # An asked phrase that names no measure may be put as loosely as the answerer's own bar.
    said["solver"] = ("optimizer", 0.52)
    put = "FooNet is trained with a proximal optimizer."
    assert _verdict("Which solver does FooNet use?", put, near=near).answerable
    assert not _verdict("Which solver does FooNet use?", put).answerable


def test_a_count_must_be_of_the_asked_thing_or_a_close_word() -> None:
    # A broader word ("hardware") next to a number does not say how many of the narrower
    # thing ("accelerators") there are.
    said: dict[str, tuple[str, float]] = {"accelerators": ("hardware", 0.53)}
    near = _near_by_table(said)

    broad = "Across several hardware setups, FooNet cuts latency by 2.6x."
    question = "How many accelerators does FooNet use?"
    verdict = _verdict(question, broad, near=near)
    assert not verdict.answerable and "accelerators" in verdict.reason
    said["accelerators"] = ("hardware", NEAR_MEASURE)  # as close as a quantity's word must be
    assert _verdict(question, broad, near=near).answerable
    assert _verdict(question, "FooNet trains on 8 accelerators.").answerable
    # The words a number counts may put the thing loosely: they say how many of it there are.
    said["accelerators"] = ("chips", 0.53)
    assert _verdict(question, "FooNet trains on 8 custom chips.", near=near).answerable
    spread = "FooNet cuts latency by 2.6x on custom chips."  # a number, but no count of chips
    assert not _verdict(question, spread, near=near).answerable


def test_words_relating_the_asked_things_need_not_be_stated() -> None:
    assert asked_phrases("What different strategies do FooNet and BarNet use?") == []
    assert asked_phrases("What respective speedups do FooNet and BarNet report?") == ["speedups"]
    verdict = _verdict("What novel loss does FooNet add?", "FooNet adds a contrastive loss.")
    assert verdict.answerable, verdict.reason
    unstated = _verdict("What novel loss does FooNet add?", "FooNet adds a contrastive head.")
    assert not unstated.answerable and "'loss'" in unstated.reason


def test_a_count_the_question_gives_asks_which_things_they_are() -> None:
    assert given_count("Which three tiling strategies does FooNet compare?") == (
        "three",
        "tiling strategies",
    )
    assert given_count("How many tiling strategies does FooNet compare?") is None
    assert given_count("Which 2025 tilers beat FooNet?") is None  # a year, not a count
    question = "Which three tiling strategies does FooNet compare?"
    # The paper gives the count, not which: refused, saying so.
    echo = "FooNet compares 3 tiling strategies and finds a clear winner."
    verdict = _verdict(question, echo)
    assert not verdict.answerable and "which three tiling strategies" in verdict.reason
    # Listed right after the count, or later in the clause, they are stated.
    for listed in (
        "FooNet compares three tiling strategies: greedy, random and quartz tiling.",
        "FooNet compares three strategies of tiling (greedy, random, quartz).",
        "FooNet compares three tiling strategies, i.e., greedy, random and quartz tiling.",
        "FooNet compares three tiling strategies, Greedy, Random and Quartz.",
        "FooNet compares three tiling strategies for sparse grids: greedy, random, quartz.",
    ):
        assert _verdict(question, listed).answerable, listed
    # A paper that does not write the count is judged by the other gates.
    assert _verdict(question, "FooNet compares greedy and quartz tiling strategies.").answerable


def test_a_generic_kind_may_be_answered_by_a_description_in_lowercase_words() -> None:
    question = "Which sparse models does FooNet tile?"
    described = "FooNet tiles sparse quartz regression and sparse linear regression."
    verdict = _verdict(question, described)
    assert verdict.answerable, verdict.reason
    # The modifier must describe a thing, not run into a verb or the kind's own word.
    for unstated in ("FooNet trains a sparse net to tile grids.", "FooNet tiles sparse models."):
        verdict = _verdict(question, unstated)
        assert not verdict.answerable and "name the models" in verdict.reason, unstated


def test_a_comparative_relates_the_asked_thing_to_another_one() -> None:
    # "What weaker guarantee": the abstract gives the guarantee, not the comparison.
    assert asked_phrases("What weaker yet cheaper bound does FooNet give?") == []
    assert asked_phrases("Which larger encoder does FooNet distil?") == ["encoder"]
    verdict = _verdict("Which larger encoder does FooNet distil?", "FooNet distils a ViT encoder.")
    assert verdict.answerable, verdict.reason
    # A degree after "how much" is still asked for, and "more" still counts.
    assert asked_phrases("How much faster is FooNet?") == []
    assert not _verdict("How much faster is FooNet?", "FooNet is a fast tiler.").answerable


def test_the_letters_of_a_formula_name_nothing() -> None:
    abstract = (
        "FooNet tiles grids in theory. Its evaluated bound is $\\tilde{O}(\\epsilon dH^2K)$ "
        "for $K$ rounds."
    )
    assert without_math(abstract).endswith("Its evaluated bound is   for   rounds.")
    verdict = _verdict("Which environments is FooNet tested in?", abstract)
    assert not verdict.answerable and "name the environments" in verdict.reason
    # A name outside the formula still names one.
    named = _verdict(
        "Which environments is FooNet tested in?",
        f"{abstract} We test it in QZGym environments.",
    )
    assert named.answerable, named.reason


def test_a_change_in_a_measure_may_be_put_in_another_word_for_it() -> None:
    asked = "What mean gains does FooNet report on QuartzSet?"
    verdict = _verdict(asked, "FooNet gives a 12.5% mean improvement on QuartzSet.")
    assert verdict.answerable, verdict.reason
    cut = _verdict("What latency reduction does FooNet give?", "FooNet cuts latency by 3.2x.")
    assert cut.answerable, cut.reason
    # A change the other way is not the one asked for, and a gain needs its number.
    assert not _verdict(asked, "FooNet gives a 12.5% mean drop on QuartzSet.").answerable
    assert not _verdict(asked, "FooNet gives a mean improvement on QuartzSet.").answerable


def test_a_position_relates_the_asked_thing_to_another_one() -> None:
    # "Which second cutting pass", "what earlier tiler": placed after or before another
    # thing, which the abstract need not say.
    assert asked_phrases("Which second cutting pass does FooNet add?") == ["cutting pass"]
    assert asked_phrases("What earlier tiler does FooNet refine?") == ["tiler"]
    abstract = "FooNet refines QuartzTile, a greedy tiler, with a learned cutting pass."
    verdict = _verdict("Which second cutting pass does FooNet add?", abstract)
    assert verdict.answerable, verdict.reason
    # Other words before the asked noun are still asked for.
    assert asked_phrases("Which greedy cutting pass does FooNet add?") == ["greedy cutting pass"]


def test_a_long_form_with_its_short_form_and_the_kind_names_an_instance() -> None:
    question = "Which tiling algorithm is FooNet derived from, and which noise mechanism?"
    algorithm = "While the Quartz Zipper (QZ) algorithm tiles grids, it fails on sparse ones."
    mechanism = "FooNet feeds them into an adapted Quartz Mechanism (QM) for noise."
    assert defines_instance(algorithm, "algorithm", question)
    assert defines_instance(mechanism, "mechanism", question)
    verdict = _verdict(question, f"{algorithm} {mechanism}")
    assert verdict.answerable, verdict.reason
    # Not the question's own name, nor the method the papers introduce, nor a plural (a class
    # of things), nor another kind.
    assert not defines_instance(algorithm, "algorithm", "Which algorithm does QZ refine?")
    assert not defines_instance(algorithm, "algorithm", question, own=["QZ"])
    plural = "We study Small Quartz Models (SQMs) for tiling."
    assert not defines_instance(plural, "models", "Which models does FooNet distil?")
    assert not defines_instance(algorithm, "mechanism", question)
    refused = _verdict(question, "FooNet derives a tiling algorithm with a noise mechanism.")
    assert not refused.answerable and "name the algorithm" in refused.reason


@pytest.mark.parametrize(
    ("question", "phrases"),
    [
        # A punctuation mark ends the phrase.
        (
            "On how many graph environments, spread over suites, does FooNet win?",
            ["graph environments"],
        ),
        # A word before a determiner is a verb, not part of the phrase.
        ("What cache layout speeds the decoding of FooNet?", ["cache layout"]),
        # Words that name the kind of answer, or say how usual it is, need not be stated.
        ("Into which pieces is the FooNet error split?", []),
        ("What fix does FooNet suggest for drift?", []),
        ("What usual assumption about noise does FooNet drop?", ["assumption"]),
        ("In which classic routing problems is FooNet tried?", ["routing"]),
        # A field, domain or application is a kind of answer: named by what the paper applies
        # itself to ("in psychometrics"), not by the word "field".
        ("In what field is FooNet applied?", []),
        ("Which application domain does FooNet target?", []),
        ("What real-world applications does FooNet report?", []),
        # An earlier or existing thing is asked for by what it is, not by when it came.
        ("Which earlier task does FooNet extend?", []),
        ("What existing loss does FooNet replace?", ["loss"]),
        ("Which older family of solvers does FooNet call slow?", []),
        ("Against how many competing methods is FooNet tested?", []),
        # A word before "whether" or "if" is a verb too.
        ("Which graph statistic decides whether FooNet converges?", ["graph statistic"]),
        # "At what point" asks when; a regime or phase is a kind of answer.
        ("At what point does FooNet merge its inputs?", []),
        ("At what regime does FooNet stop improving?", []),
        ("What time budget does FooNet need?", ["time budget"]),
        # A word before an object pronoun or a particle is a verb.
        ("What gate tells it when FooNet should stop?", ["gate"]),
        ("What comes out smaller with FooNet?", []),
        # An objective, a granularity or a level is a kind of answer; plain adjectives narrow it.
        ("What extra training objective keeps FooNet stable?", ["training"]),
        ("At what granularity are the series compared?", []),
        ("What simple model class does FooNet analyse?", []),
        # A basis or a style is a kind of answer too.
        ("On what basis does FooNet select data?", []),
        ("What style of update does FooNet support?", []),  # like "what kind of"
        ("What body of theory does FooNet build on?", []),  # like "what kind of" too
        # A failure or a cause is a kind of answer, like a flaw or a weakness.
        ("Which failure does FooNet blame for the drop?", []),
        # A word before "up", "off" or "down" is a verb with its particle.
        ("How many prompts make up BarSet?", ["prompts"]),
        # A word before an embedded question is a verb: a noun is not followed by "how".
        ("What caps how far FooNet can look ahead?", []),
        ("What decides which experts FooNet calls?", []),
        # "What goes on" is an event, like "what happens".
        ("What goes on inside the FooNet router?", []),
    ],
)
def test_where_the_asked_phrase_ends_and_what_it_holds(question: str, phrases: list[str]) -> None:
    assert asked_phrases(question, ["FooNet"]) == phrases


def test_function_words_inside_a_compound_need_not_be_stated() -> None:
    assert phrase_terms("already-published graphs", _weights()) == _weights().terms(
        "published graphs"
    )
    question = "How many already-published graphs does FooNet reuse?"
    verdict = _verdict(question, "FooNet reuses 48 previously published graphs.")
    assert verdict.answerable, verdict.reason


def test_a_kind_with_its_own_verb_asks_for_an_instance_of_a_named_paper() -> None:
    question = "Which LLM drives the agents that FooNet builds?"
    assert named_kinds(question) == []  # no paper named: it could ask which paper
    assert named_kinds(question, named_paper=True) == [("", "LLM")]
    unnamed = _verdict(question, "FooNet builds agents driven by a strong LLM.")
    assert not unnamed.answerable and "name the LLM" in unnamed.reason
    named = _verdict(question, "FooNet builds agents; experiments use GPT-4o as the LLM.")
    assert named.answerable, named.reason
    # In the past too, before a determiner or a name ("which LLMs generated FooNet's captions").
    for asked in ("Which LLMs generated FooNet's captions?", "Which LLM tagged the FooNet tiles?"):
        assert named_kinds(asked, named_paper=True) != []
    assert named_kinds("Which LLM tagged tiles for FooNet?", named_paper=True) == []


@pytest.mark.parametrize(
    ("question", "own"),
    [
        ("What are its limitations?", True),
        ("What are the limitations of FooNet?", True),
        ("What are FooNet's main weaknesses?", True),
        ("Where does it fail?", True),
        ("What are the limitations of existing methods that FooNet fixes?", False),
        ("How does FooNet overcome the weaknesses of dropping edges?", False),
    ],
)
def test_a_question_about_the_papers_own_limitations(question: str, own: bool) -> None:
    assert asks_own_limits(question) is own


@pytest.mark.parametrize(
    ("sentence", "limit"),
    [
        ("Our analysis is limited to linear QuartzNets.", True),
        ("FooNet cannot handle graphs with cycles.", True),
        ("We leave the nonconvex case to future work.", True),
        ("However, existing methods cannot scale to long inputs.", False),  # earlier work's
        ("FooNet does not require retraining.", False),
    ],
)
def test_a_sentence_stating_a_limit_of_the_papers_own_work(sentence: str, limit: bool) -> None:
    assert states_own_limit(sentence) is limit


def test_limitations_an_abstract_does_not_state_are_refused_with_the_reason() -> None:
    motivated = "Existing methods cannot scale to long inputs. FooNet scales to long inputs."
    verdict = _verdict("What are the limitations of FooNet?", motivated)
    assert not verdict.answerable
    assert verdict.reason == "the abstract of FooNet does not state its limitations"
    stated = motivated + " FooNet is limited to inputs of one language."
    assert _verdict("What are the limitations of FooNet?", stated).answerable


def test_how_well_asks_how_good_a_result_is_which_a_claim_answers() -> None:
    assert not asks_amount("What does FooNet solve, and how well does it work?")
    assert asks_amount("How much better than BarNet does FooNet work?")
    question = "How well does FooNet prune QuartzNets?"
    verdict = _verdict(question, "FooNet prunes QuartzNets and outperforms prior pruning methods.")
    assert verdict.answerable, verdict.reason


def test_how_an_amount_is_chosen_asks_for_no_amount() -> None:
    assert counted_things("Which step decides how many crops FooNet keeps?", ["FooNet"]) == []
    assert not asks_amount("How does FooNet decide how much to prune at each layer?")
    assert not asks_amount("How does FooNet learn how many experts to route to?")
    # What bounds an amount is asked, not the amount.
    assert not asks_amount("What bounds how many samples FooNet may draw?")
    assert not asks_amount("What caps how many tokens FooNet reads?")
    assert asks_amount("How much does FooNet prune?")
    assert counted_things("How many crops does FooNet keep?", ["FooNet"]) == ["crops"]


def test_a_base_model_is_a_named_kind_and_a_margin_an_amount() -> None:
    question = "Relative to which base model is the gain of FooNet measured?"
    assert named_kinds(question) == [("", "base model")]
    named = _verdict(question, "FooNet gains 4% in experiments relative to Llama-3 8B.")
    assert named.answerable, named.reason
    unnamed = _verdict(question, "FooNet gains 4% relative to a strong base model.")
    assert not unnamed.answerable and "name the base model" in unnamed.reason
    margin = "By what margin does FooNet beat the prior best?"
    assert asks_amount(margin) and asked_phrases(margin, ["FooNet"]) == []
    assert _verdict(margin, "FooNet beats the prior best by 3.1 points.").answerable
    assert not _verdict(margin, "FooNet clearly beats the prior best.").answerable


def test_relating_words_need_not_be_covered() -> None:
    question = "In which classic routing problems is FooNet tried?"
    text = "FooNet is tried on routing problems."
    assert coverage(question, text, _weights(), ["FooNet"]) == 1


def test_the_capitalised_words_of_a_quoted_title_are_not_names() -> None:
    question = "What is 'A Short Guide to Graph Law Estimation' about? Which graphs does it use?"
    assert query_names(question) == []
    assert query_names('Does "Quantum Harmonic Nets" beat Cake?') == ["Harmonic", "Nets", "Cake"]


def test_an_amount_stated_with_a_defined_short_form_is_stated() -> None:
    question = "How many object tracking settings does FooNet handle?"
    stated = "Tests span four OT variants."
    verdict = _verdict(question, f"We study object tracking (OT). {stated}", selected=stated)
    assert verdict.answerable, verdict.reason
    vague = "Tests span OT variants."
    unstated = _verdict(question, f"We study object tracking (OT). {vague}", selected=vague)
    assert not unstated.answerable


def test_words_that_name_the_kind_of_answer_need_not_be_covered() -> None:
    question = "What criterion does FooNet use to rank documents?"
    assert coverage(question, "FooNet ranks documents by click rate.", _weights(), ["FooNet"]) == 1
    assert coverage(question, "FooNet ranks by click rate.", _weights(), ["FooNet"]) < 1


def test_a_how_question_asks_for_no_phrase_of_its_which_clause() -> None:
    question = "How does FooNet decide which documents best fit a query?"
    verdict = _verdict(question, "FooNet scores passages by click rate against the query.")
    assert verdict.answerable, verdict.reason
    which = _verdict("Which documents best fit a query?", "FooNet scores passages by click rate.")
    assert not which.answerable and "documents" in which.reason


# The real bundled store and models -----------------------------------------------------------
@pytest.fixture(scope="module")
def answerer(bundled_home, onnx_cache) -> Answerer:  # type: ignore[no-untyped-def]
    from rag.settings import Settings

    return Answerer(Settings(home=bundled_home, cache_dir=onnx_cache), llm_spec="extractive")


def test_datasets_an_abstract_does_not_name_are_refused_with_the_reason(answerer) -> None:  # type: ignore[no-untyped-def]
    answer = answerer.answer("Which datasets is FIML evaluated on?")
    assert answer.refused, answer.answer
    assert "name the datasets" in answer.refusal_reason


def test_a_refusal_answers_the_parts_of_the_question_the_abstract_states(answerer) -> None:  # type: ignore[no-untyped-def]
    answer = answerer.answer(
        "What does FIML integrate into one framework, and which datasets is it evaluated on?"
    )
    assert answer.refused and answer.answer == CANNOT_ANSWER
    assert "name the datasets" in answer.refusal_reason
    assert "graph partition" in answer.partial and "[1]" in answer.partial
    assert answer.cited_paper_ids == ["WSGpXQRUtH"]  # FIML, the paper asked about
    assert all(s.support == "supported" and s.citations == [1] for s in answer.sentences)
    assert answer.related == []  # the cited card shows the paper
    # The name may be in the part that is refused: the rest is still answered from that paper.
    later = answerer.answer(
        "Which datasets is FIML evaluated on, and what does it build into one framework?"
    )
    assert later.refused and later.cited_paper_ids == ["WSGpXQRUtH"]
    assert "simultaneously integrated" in later.partial  # the method sentence, not the motivation
    # A follow-up: the parts are answered from the paper under discussion, quoting what they
    # ask for (not what the refused part asks for).
    first = answerer.answer("What is FIML?")
    follow = answerer.answer(
        "Which datasets does it use, and how does it balance the views?",
        history=[("What is FIML?", first.answer)],
    )
    assert follow.refused and "name the datasets" in follow.refusal_reason
    assert "adaptive weight coefficient" in follow.partial
    assert "existing approaches" not in follow.partial  # not the abstract's account of others
    assert follow.cited_paper_ids == ["WSGpXQRUtH"]
    # Nothing it asks is stated: the plain refusal, with the paper as related.
    plain = answerer.answer(
        "Which datasets is FIML evaluated on, and what warm-up length does it use?"
    )
    assert plain.refused and plain.partial == "" and plain.citations == []
    assert [h.paper_id for h in plain.related] == ["WSGpXQRUtH"]


def test_a_refusal_in_part_shows_the_sentence_closest_to_the_refused_detail(answerer) -> None:  # type: ignore[no-untyped-def]
    answer = answerer.answer(
        "Which benchmarks does SafetyAnalyst report F1 on, and what does it distill its "
        "classifier from?"
    )
    assert answer.refused and "name the benchmarks" in answer.refusal_reason
    assert "distilled from" in answer.partial
    assert "comprehensive benchmarks" not in answer.partial  # the refused part is not answered
    assert [h.paper_id for h in answer.related] == ["WUGrleBcYP"]  # but its closest sentence shown
    assert "comprehensive benchmarks" in answer.closest["WUGrleBcYP"]


def test_a_benchmark_the_abstract_names_is_answered(answerer) -> None:  # type: ignore[no-untyped-def]
    answer = answerer.answer("Which benchmark does MVA improve by 1.2 percentage points?")
    assert not answer.refused, answer.refusal_reason
    assert "MMLU" in answer.answer


# What the extractive answer quotes for such questions ---------------------------------------
def _chosen(question: str, *scored: tuple[str, float]) -> list[str]:
    from rag.answer.modes.extractive import cover_question

    ranked = [(Sentence(text, 0, 1, score), 1) for text, score in scored]
    return [s.text for s, _ in cover_question(question, ranked, _weights())]


def test_which_benchmarks_quotes_the_sentence_that_names_them() -> None:
    chosen = _chosen(
        "On which speech benchmarks is the noise robustness of FooNet evaluated?",
        ("FooNet makes speech models robust to noise with a denoising front end.", 9.0),
        ("This front end trades noise robustness against clean speech quality.", 8.0),
        ("The noise robustness of speech models is a key question.", 7.0),
        ("Experimental results on LibriSpeech and CHiME-4 show the effectiveness of FooNet.", 0.0),
    )
    assert (
        "Experimental results on LibriSpeech and CHiME-4 show the effectiveness of FooNet."
        in chosen
    )


def test_which_problems_quotes_the_sentence_that_lists_them() -> None:
    chosen = _chosen(
        "For which scheduling problems does the learned heuristic give shorter makespans?",
        ("We study a learned heuristic for scheduling problems.", 9.0),
        ("The learned heuristic gives shorter makespans by picking the next job.", 8.0),
        ("Learned heuristics are common in scheduling.", 7.5),
        ("Gains hold for the job shop, flow shop and open shop problems.", 0.5),
    )
    assert "Gains hold for the job shop, flow shop and open shop problems." in chosen


def test_what_accuracy_quotes_the_sentence_with_the_number() -> None:
    chosen = _chosen(
        "What top-5 error does the pruned vision network reach on natural images?",
        ("We propose a channel pruning method for vision networks.", 9.0),
        ("Pruned vision networks reach low top-5 error on natural images.", 8.0),
        ("The pruning method adds a single learnable threshold to the vision network.", 7.5),
        ("It gets 7.1% on natural images with a third of the channels.", 0.5),
    )
    assert "It gets 7.1% on natural images with a third of the channels." in chosen


def test_a_title_written_out_names_its_paper(answerer) -> None:  # type: ignore[no-untyped-def]
    title = "Dueling Convex Optimization with General Preferences"
    question = f"Which datasets do the experiments of {title.lower()} use?"
    assert answerer._subjects(question) == [title.lower()]
    assert answerer._subject_papers(question) == ["WMHNs2Necq"]
    answer = answerer.answer(question)
    assert answer.refused and answer.refusal_reason.startswith(f"the abstract of {title.lower()}")
    assert answer.related[0].title == title


def test_the_decision_does_not_depend_on_the_context_budget(answerer) -> None:  # type: ignore[no-untyped-def]
    # A model's context has room for fewer papers than were retrieved; the refusal gates read
    # every retrieved paper all the same, so every backend refuses alike.
    question = "How do preference optimization methods tune diffusion and text-to-3D generators?"
    hits = next(e.hits for e in answerer.stream(question) if e.kind == "retrieved")
    passages = answerer._context({"mode": "ask", "hits": hits, "query": question}, {})
    full = answerer._refusal(question, question, hits, passages, "ask")
    assert full is None
    for kept in (passages[:1], passages[-1:]):
        assert answerer._refusal(question, question, hits, kept, "ask") == full


def test_a_sentence_never_runs_across_two_abstracts() -> None:
    # Without a named paper, an amount is looked for in the retrieved abstracts' sentences; an
    # abstract's last words (no final period) must not join the next abstract's first sentence.
    hit = PaperHit("p1", "Fast retrieval", [], "", "", 1.0)
    first, second = "We study BarNet on 12 tasks", "Released checkpoints matter for reuse."
    passage = ContextPassage(1, hit, [Sentence(first, 0, len(first), 1.0)])
    verdict = check_answerable(
        "How many released checkpoints are compared?",
        [passage],
        _weights(),
        min_coverage=0.0,
        abstracts={"p1": first, "p2": second},
    )
    assert not verdict.answerable and "checkpoints" in verdict.reason


@pytest.mark.parametrize(
    ("question", "abstract", "answerable"),
    [
        # "X as a base KIND" and "KIND such as X" say which one, named or not
        (
            "Which optimizer does FooNet build on?",
            "FooNet uses plain momentum descent as its base optimizer and trains fast.",
            True,
        ),
        (
            "Which datasets does FooNet use?",
            "FooNet is tested on datasets such as handwritten digits and street signs.",
            True,
        ),
        (
            "Which datasets does FooNet use?",
            "FooNet is tested on datasets such as several public collections.",
            False,
        ),
        ("Which datasets does FooNet use?", "FooNet is tested on six diverse datasets.", False),
        # a method compared against, or built on, is no dataset
        (
            "Which datasets is FooNet evaluated on?",
            "Our experiments show FooNet is faster than BarNet- and BazGAN-based models.",
            False,
        ),
        (
            "Which datasets is FooNet evaluated on?",
            "Our experiments show FooNet beats BarNet on QuartzSet and BazBench.",
            True,
        ),
        # a value in parentheses after a name the question names is its reported result
        (
            "What top-1 accuracy does FooNet reach on BarSet?",
            "FooNet performs well on BarSet (81.2%) and BazSet (64.0%).",
            True,
        ),
        (
            "What top-1 accuracy does FooNet reach on BarSet?",
            "FooNet performs well on BarSet (256x256 images).",
            False,
        ),
    ],
)
def test_which_one_and_what_value_stated_without_the_kind_word(
    question: str, abstract: str, answerable: bool
) -> None:
    assert _verdict(question, abstract).answerable is answerable


@pytest.mark.parametrize(
    ("question", "abstract", "answerable"),
    [
        ("Which models does FooNet outperform?", "FooNet outperforms strong baselines.", False),
        ("Which models does FooNet outperform?", "FooNet outperforms BarNet and BazGAN.", True),
        ("What methods is FooNet compared with?", "We compare FooNet to prior work.", False),
        # "to compare" is what the model is for, not what it is compared with
        ("Which model does FooNet use to compare images?", "FooNet compares images.", True),
    ],
)
def test_a_generic_kind_compared_with_asks_for_the_baselines(
    question: str, abstract: str, answerable: bool
) -> None:
    assert _verdict(question, abstract).answerable is answerable


@pytest.mark.parametrize(
    ("question", "abstract", "answerable"),
    [
        # the kind of answer in other words: "shape", "failing", plural kinds
        (
            "What shape does FooNet's loss curve have?",
            "FooNet's loss curve follows a power law.",
            True,
        ),
        (
            "What failing of earlier planners does FooNet fix?",
            "Earlier planners are myopic; FooNet plans ahead.",
            True,
        ),
        (
            "Which network architectures does FooNet run on?",
            "FooNet is tested on the BarNet-50 network.",
            True,
        ),
        # a collection is a kind of dataset: it is answered by a name
        (
            "On which image collections was FooNet tested?",
            "FooNet is tested on the BarSet-10 and BazSet image datasets.",
            True,
        ),
        (
            "On which image collections was FooNet tested?",
            "FooNet is tested on several image collections.",
            False,
        ),
        # a short form defined by the asked kind's modifiers names one of that kind
        (
            "Which risk measure does FooNet optimize?",
            "FooNet optimizes the tail value at risk (TVaR) of returns.",
            True,
        ),
        (
            "Which real-world graph datasets is FooNet tested on?",
            "FooNet handles unsupervised graph transfer (UGT) on real-world datasets.",
            False,
        ),
        # "cities'" is a plural possessive: the datasets must still be named
        (
            "Which two cities' taxi datasets does FooNet use?",
            "FooNet uses two taxi datasets.",
            False,
        ),
        # adjectives and a quantity's kind ask for its value
        (
            "What numerical competitive ratio does FooNet reach?",
            "FooNet reaches a near-optimal competitive ratio.",
            False,
        ),
        (
            "What numerical competitive ratio does FooNet reach?",
            "FooNet reaches a competitive ratio of 1.5.",
            True,
        ),
    ],
)
def test_kinds_of_answer_in_other_words(question: str, abstract: str, answerable: bool) -> None:
    assert _verdict(question, abstract).answerable is answerable


def test_a_kind_a_topic_studies_is_a_topic_word() -> None:
    # "architectures" names the kind of answer in a question, and the subject of a topic
    terms = topic_terms("papers that design network architectures", _weights())
    assert {"network", "architectur"} <= terms
    assert "method" not in topic_terms("papers with methods for sorting", _weights())


def test_plural_kinds_of_answer_are_no_asked_words() -> None:
    for kind in ("architectures", "ratios", "proportions", "drawbacks", "shortcomings"):
        assert asked_phrases(f"Which network {kind} does FooNet report?", ["FooNet"]) == ["network"]


def test_instance_statements_and_reported_values() -> None:
    assert states_instance("with the soft actor-critic as a base algorithm", "algorithm")
    assert not states_instance("uses it as a base algorithm", "algorithm")
    # A compound right before the kind names a known one; one that counts or sizes does not.
    assert states_instance("it emulates the actor-critic algorithm in context", "algorithm")
    assert not states_instance("we give the two-stage algorithm", "algorithm")
    assert not states_instance("a actor-critic-style algorithm", "algorithm")
    assert states_instance("benchmarks, including LongQA and others", "datasets")
    assert not states_instance("benchmarks such as 12 others", "datasets")
    assert not states_instance("on benchmarks like ours", "datasets")
    # The things listed may be of another kind: "benchmarks including X and Y tasks" lists tasks.
    assert not states_instance(
        "on several benchmarks including sorting and quartz tasks", "datasets"
    )
    assert states_instance("on several benchmarks including QuartzBench", "benchmarks")
    assert reported_for("BarSet", r"on BarSet (70.61\%) and BazSet")
    assert reported_for("BarSet", "BarSet (0.82) vs")
    assert not reported_for("BarSet", "BarSet (12 tasks)")
    assert not reported_for("Bar", "BarSet (70.1%)")


def test_word_coverage_judges_questions_that_name_no_paper() -> None:
    # Informal words ("lay out", "paying a lot") cover little of an abstract; a question that
    # names its paper is judged by the asked-detail gates, one that names none by coverage too.
    abstract = "FooNet arranges adapters in a tree and estimates task similarity with a bandit."
    question = "How does FooNet lay out its adapters, and how does it avoid paying a lot for it?"
    hit = PaperHit("p1", "Fast retrieval with FooNet", [], "", "", 1.0)
    passage = ContextPassage(1, hit, [Sentence(abstract, 0, len(abstract), 1.0)])

    def verdict(names: list[str], papers: list[str]) -> Any:
        return check_answerable(
            question,
            [passage],
            _weights(),
            min_coverage=0.35,
            subject_names=names,
            abstracts={"p1": abstract},
            subject_papers=papers,
        )

    assert verdict(["FooNet"], ["p1"]).answerable
    unnamed = verdict([], [])
    assert not unnamed.answerable and "too little" in unnamed.reason


def test_a_question_close_in_meaning_to_a_paper_is_not_refused_for_its_own_words() -> None:
    # A question that describes a paper in its own words holds few of its words; when the paper
    # is close to it in meaning, that paper is the one described.
    abstract = "FooNet arranges adapters in a tree and estimates task similarity with a bandit."
    question = "Which paper lays out its add-on modules as a hierarchy, paying little for it?"

    def verdict(similarity: float, asked: str = question) -> Any:
        hit = PaperHit("p1", "Fast retrieval with FooNet", [], "", "", 1.0)
        hit = replace(hit, dense_similarity=similarity)
        passage = ContextPassage(1, hit, [Sentence(abstract, 0, len(abstract), 1.0)])
        return check_answerable(asked, [passage], _weights(), min_coverage=0.35)

    far = verdict(DESCRIBED_MEANING - 0.05)
    assert not far.answerable and "too little" in far.reason
    assert verdict(DESCRIBED_MEANING).answerable
    # Closeness spares only the words' coverage: a detail asked for must still be stated.
    amount = "How many GPUs does the paper that lays out add-on modules as a hierarchy use?"
    assert not verdict(0.9, amount).answerable


def test_a_named_paper_is_never_too_far_from_the_question(answerer) -> None:  # type: ignore[no-untyped-def]
    named = answerer.answer("How does LEVIS make it quick?")
    assert named.refusal_reason != "no paper is close enough to the question"
    unnamed = answerer.answer("How do I bake a sourdough loaf at home?")
    assert unnamed.refused and unnamed.refusal_reason == "no paper is close enough to the question"


def test_a_generic_kind_asked_of_a_named_paper_is_answered_by_the_name_it_uses() -> None:
    question = "Which pairwise-choice model of user clicks is assumed in FooNet?"
    assert named_kinds(question) == []
    assert named_kinds(question, named_paper=True) == [("pairwise-choice", "model")]
    # The paper names the model in its own words: the asker's modifiers need not be written.
    named = _verdict(question, "FooNet adopts the Plackett-Luce (PL) model of rankings.")
    assert named.answerable, named.reason
    unnamed = _verdict(question, "FooNet assumes a simple model of rankings.")
    assert not unnamed.answerable and "name the model" in unnamed.reason
    measure = "What overlap measure does FooNet use to compare the two graphs?"
    assert named_kinds(measure, named_paper=True) == [("overlap", "measure")]


def test_how_many_is_answered_by_a_count_where_the_rest_of_its_clause_is_stated() -> None:
    question = "How many hops must FooNet follow to resolve a queried key, and how fast is it?"
    counted = _verdict(
        question,
        "Each query requires following chains up to four steps deep to resolve the queried key.",
    )
    assert counted.answerable, counted.reason
    # A count elsewhere, or the clause's words without a count, does not answer it.
    elsewhere = _verdict(
        question, "FooNet resolves a queried key by following chains. It has 4 heads."
    )
    assert not elsewhere.answerable and "hops" in elsewhere.reason


@pytest.mark.parametrize(
    ("question", "stated", "unstated"),
    [
        # Points of a measure are stated as a percentage.
        (
            "How many points above BarNet is FooNet on QuartzBench?",
            "FooNet improves accuracy on QuartzBench by 2.7% over BarNet.",
            "FooNet improves accuracy on QuartzBench over BarNet.",
        ),
        # A ratio of something is stated by a value of it.
        (
            "What tiling ratio does FooNet reach on QuartzBench?",
            "On QuartzBench, FooNet reaches 4.7x tiling at no loss.",
            "On QuartzBench, FooNet improves tiling at no loss.",
        ),
    ],
)
def test_a_measure_asked_by_its_unit_is_stated_by_a_value(
    question: str, stated: str, unstated: str
) -> None:
    verdict = _verdict(question, stated)
    assert verdict.answerable, verdict.reason
    assert not _verdict(question, unstated).answerable


def test_generic_nouns_name_the_kind_of_answer() -> None:
    for noun in ("objects", "concept", "formulation", "notions", "signal", "knob"):
        assert asked_phrases(f"What {noun} does FooNet rely on?", ["FooNet"]) == []


def test_a_kind_followed_by_a_phrase_is_still_the_asked_kind() -> None:
    question = "Which corpus in the main example is FooNet tuned on, and by how much does it gain?"
    assert named_kinds(question) == [("", "corpus")]
    named = _verdict(
        question, "In our main experiment, FooNet is tuned on OpenWebMath and gains 3%."
    )
    assert named.answerable, named.reason


def test_capitalised_concept_words_are_not_names_but_a_product_name_is() -> None:
    concept = "We rely on Stochastic Gradient Descent for training."
    assert instance_names(concept, "which datasets") == []
    product = "Training runs on the NVIDIA Titan Xp."
    assert instance_names(product, "which GPU") == ["NVIDIA"]
    # A defined short form joined to a word is a modifier ("PDE-solving"), not a name; a
    # model's size variant is ("BERT-base").
    compound = "The PDE-solving step uses BERT-base features on the data."
    assert instance_names(compound, "which datasets", short={"PDE"}) == ["BERT-base"]
    # An author of cited work is no name of a model or dataset.
    cited = "Unlike earlier studies (Fooman et al. 2024), we test on BarSet."
    assert instance_names(cited, "which models") == ["BarSet"]
    # An adjective made from a name is no name, prefixed or not.
    assert instance_names("On non-Euclidean data, e.g. BarSet graphs.", "which datasets") == [
        "BarSet"
    ]
    # A word capitalised because it opens the sentence is no name.
    opening = "Pre-trained VLMs such as Fast-Quartz are popular."
    assert instance_names(opening, "which VLMs") == ["Fast-Quartz"]


def test_the_words_of_a_long_form_glossing_a_short_form_are_not_names() -> None:
    assert query_names("Where is FOO (Fast Object Optimizer) tested?") == ["FOO"]
    assert query_names("How does Fast Object Optimizer (FOO) work?") == ["FOO"]
    # A parenthesis that does not spell the short form is no gloss.
    assert query_names("How does FooNet (built on Mamba Blocks) work?") == [
        "FooNet",
        "Mamba",
        "Blocks",
    ]


def test_an_amount_the_named_paper_states_in_other_words_is_stated() -> None:
    def near(words: Any, text: str) -> set[str]:  # "faster" is said as "speed-ups"
        return {w for w in words if w == "faster" and "speed-ups" in text}

    question = "How much faster is FooNet?"
    stated = "FooNet gives 68.7% speed-ups over BarNet."
    assert _verdict(question, stated, near=near).answerable
    assert not _verdict(question, stated).answerable  # no word for it: not stated
    unstated = _verdict(question, "FooNet gives large speed-ups over BarNet.", near=near)
    assert not unstated.answerable and unstated.reason == "no passage states the asked-for amount"


def test_a_word_hyphenated_to_a_short_form_is_mentioned_spelled_out() -> None:
    abstract = "FooNet answers range queries under local differential privacy with few users."
    for question in ("Which queries does FooNet answer under local-DP?", "Is FooNet local-DP?"):
        assert _verdict(question, abstract).answerable, question
    # Another word before the same short form, or the words not adjacent, is not it.
    absent = _verdict("Which queries does FooNet answer under central-DP?", abstract)
    assert not absent.answerable and "never mention central-DP" in absent.reason
    apart = "FooNet keeps local weights differential to a private baseline."
    assert not _verdict("Is FooNet local-DP?", apart).answerable


def test_a_name_the_abstract_writes_with_math_is_mentioned() -> None:
    abstract = "We compare FooNet with $\\mu$BarNet and $K^2$Quartz on retrieval."
    for question in ("Is FooNet faster than muBarNet?", "Is FooNet faster than μBarNet?"):
        assert _verdict(question, abstract).answerable, question
    assert _verdict("Is FooNet faster than K2Quartz?", abstract).answerable
    absent = _verdict("Is FooNet faster than muQuartz?", abstract)
    assert not absent.answerable and "never mention muQuartz" in absent.reason


def test_a_field_acronym_the_abstract_spells_out_is_mentioned() -> None:
    question = "Which RL algorithm does FooNet build on?"
    spelled = _verdict(question, "FooNet builds on the PPO algorithm of reinforcement learning.")
    assert spelled.answerable, spelled.reason
    absent = _verdict(question, "FooNet builds on the PPO algorithm of supervised learning.")
    assert not absent.answerable and "never mention RL" in absent.reason


@pytest.mark.parametrize(
    ("question", "kind", "named", "vague"),
    [
        # Hardware asked in plain words is read in the paper's words (GPU, device).
        (
            "On which graphics card was FooNet trained?",
            ("", "graphics card"),
            "FooNet trains in an hour on a single NVIDIA H100 GPU.",
            "FooNet trains in an hour on a single GPU.",
        ),
        # Chatbots are language models.
        (
            "Which bigger chatbots does FooNet match?",
            ("bigger", "chatbots"),
            "FooNet matches larger language models such as GPT-4 and Gemini Pro.",
            "FooNet matches much larger language models.",
        ),
        # A second noun after the kind names the same kind.
        (
            "Which benchmark suite is FooNet tested on?",
            ("", "benchmark"),
            "FooNet is tested on the DMControl benchmark suite and wins.",
            "FooNet is tested on a standard benchmark suite and wins.",
        ),
    ],
)
def test_a_named_kind_in_other_words_needs_a_name(
    question: str, kind: tuple[str, str], named: str, vague: str
) -> None:
    assert named_kinds(question) == [kind]
    answered = _verdict(question, named)
    assert answered.answerable, answered.reason
    refused = _verdict(question, vague)
    assert not refused.answerable and f"name the {kind[1]}" in refused.reason


def test_a_routine_names_the_kind_of_answer_and_generic_kinds_need_a_named_paper() -> None:
    assert asked_phrases("Which classic sorting routine does FooNet speed up?", ["FooNet"]) == [
        "sorting"
    ]
    assert named_kinds("Which GPU model trains FooNet?") == []  # a kind with its own verb
    assert named_kinds("What network architecture does FooNet use?", named_paper=True) == [
        ("network", "architecture")
    ]


def test_a_followup_is_gated_on_what_it_asks_not_on_the_earlier_turn() -> None:
    # The standalone query carries the earlier "how much" question; the follow-up asks how.
    abstract = "FooNet caches the keys of each query. It keeps the cache small by merging keys."

    def verdict(asked: str) -> Any:
        query = f"How much memory does FooNet save? {asked}"
        return _verdict(query, abstract, asked=asked, followup=True)

    assert verdict("How does it keep the cache small?").answerable
    assert not verdict("And how much faster is it?").answerable


def test_an_amount_asked_of_a_named_paper_must_be_stated_by_that_paper() -> None:
    own = PaperHit("p1", "FooNet", [], "", "", 1.0)
    other = PaperHit("p2", "BarNet", [], "", "", 1.0)
    mine = "FooNet makes decoding faster with a learned cache."
    theirs = "BarNet makes decoding 3x faster with a cache."
    passages = [
        ContextPassage(1, own, [Sentence(mine, 0, len(mine), 1.0)]),
        ContextPassage(2, other, [Sentence(theirs, 0, len(theirs), 1.0)]),
    ]
    verdict = check_answerable(
        "How much faster is decoding with FooNet?",
        passages,
        _weights(),
        min_coverage=0.0,
        subject_names=["FooNet"],
        abstracts={"p1": mine, "p2": theirs},
        subject_papers=["p1"],
    )
    assert not verdict.answerable, verdict


def test_the_digit_of_a_name_is_no_value() -> None:
    question = "What attack success rate does Q3RA reach?"
    unstated = "We propose Q3RA, which attacks black-box models with more success than before."
    assert not _verdict(question, unstated).answerable
    assert _verdict(question, "Q3RA reaches a 91% attack success rate.").answerable


@pytest.mark.parametrize(
    ("question", "acclaim"),
    [
        ("What is the best paper at ICML 2025?", True),
        ("Which are the most influential papers on FooNet?", True),
        ("Which papers won the outstanding paper award?", True),
        ("List the award-winning work on BarSet", True),
        ("How many citations does FooNet have?", True),
        ("Which method performs best on BarSet?", False),
        ("What is the best accuracy FooNet reaches?", False),
        ("Which papers design reward functions for auctions?", False),
        ("Which papers study award mechanisms?", False),
    ],
)
def test_questions_about_acclaim_no_record_holds(question: str, acclaim: bool) -> None:
    assert asks_for_acclaim(question) is acclaim


def test_a_question_about_acclaim_is_refused_with_why(answerer) -> None:  # type: ignore[no-untyped-def]
    answer = answerer.answer("Which is the best paper on KV cache loading?")
    assert answer.refused and answer.refusal_reason == ACCLAIM_REASON
    # Naming no topic at all, it is still refused for what no record holds.
    for question in ("Which is the best paper?", "What is the best paper at ICML 2025?"):
        answer = answerer.answer(question, filters=SearchFilters())
        assert answer.refused and answer.refusal_reason == ACCLAIM_REASON, question
    assert not answerer.answer("Which paper reduces time to first token the most?").refused


@pytest.mark.parametrize(
    ("question", "no_subject"),
    [
        ("What does it do?", True),  # no content word at all
        ("Summarize them", True),
        ("Tell me about it", True),
        ("What data does it use?", True),  # refers back; "data" is in most papers
        ("What data does FooNet use?", False),  # names its subject
        ("Which data sets does the tensor sketch paper use?", False),  # a rare content word
        ("What data are used?", False),  # common words only, but refers to nothing unsaid
        ("What problem does it solve?", True),  # its subject is a pronoun
        ("How much faster are they on tensor sketches?", True),  # two rare words say little
        # ... unless the rest of it describes the subject in several rare words.
        ("What sketch does it use to compress tensors in FooNet?", False),
        ("How much faster is it at sketching tensors?", True),
        ("Which tensor sketch does FooNet use, and why does it help?", False),  # "it": FooNet
        ("Why do tensor sketches work?", False),
        ("Which is better?", True),  # a comparative alone: better than what?
        ("Which one is the fastest?", True),
        ("Which is better for tensor sketches?", False),
    ],
)
def test_a_question_that_names_nothing_has_no_subject(question: str, no_subject: bool) -> None:
    common = {"data", "use", "set"}
    df = {"data": 80, "use": 90, "set": 40, "foonet": 1, "tensor": 3, "sketch": 2, "compress": 4}
    found = names_no_subject(
        question, _weights(), lambda t: df.get(t, 0 if t in common else 10), 100
    )
    assert found is no_subject


def test_a_first_question_about_it_is_refused_and_a_follow_up_is_not(answerer) -> None:  # type: ignore[no-untyped-def]
    alone = answerer.answer("What does it do?")
    assert alone.refused and alone.refusal_reason == NO_SUBJECT_REASON and not alone.related
    first = answerer.answer("How much does Cake cut time to first token?")
    followup = answerer.answer(
        "What does it do?",
        history=[(first.question, first.answer)],
        history_papers=[c.paper_id for c in first.citations],
    )
    assert not followup.refused and followup.citations
    assert {c.paper_id for c in followup.citations} <= {c.paper_id for c in first.citations}
    # A first question whose subject is a pronoun has one when it names a paper later on.
    named = answerer.answer("How much does it cut time to first token, the Cake method?")
    assert not named.refused and named.citations[0].title.startswith("Compute or Load KV Cache")


@pytest.mark.parametrize(
    ("sentence", "names"),
    [
        ("FooNet outperforms BarNet and GPT-4 on QuartzSet.", {"BarNet", "GPT-4"}),
        ("It is faster than BarNet- and BazGAN-based models.", {"BarNet", "BazGAN"}),
        ("We evaluate FooNet on QuartzSet.", set()),
    ],
)
def test_names_a_sentence_compares_against(sentence: str, names: set[str]) -> None:
    assert names <= compared_names(sentence)
    assert "QuartzSet" not in compared_names(sentence)


def test_code_asked_of_a_named_paper_is_its_link_or_a_refusal(answerer) -> None:  # type: ignore[no-untyped-def]
    missing = answerer.answer("Where can I find the code for Cake?")
    assert missing.refused
    assert missing.refusal_reason == "the abstract of Cake gives no link to code"
    found = answerer.answer("Is the code of SPACY available?")
    assert not found.refused and "github.com/Rose-STL-Lab/SPACY" in found.answer
    # Asking about an implementation is not asking for code.
    assert not answerer.answer("How is Cake implemented?").refused


@pytest.mark.parametrize(
    ("question", "ranking"),
    [
        ("What are the most common datasets?", True),
        ("Which benchmarks are most used at ICML 2025?", True),
        ("Which datasets are used most often?", True),
        ("What are the most popular model architectures?", True),
        ("Which model is the most accurate on QuartzSet?", False),
        ("What is the most common topic?", False),  # the topic map answers it
        ("How many papers use QuartzSet?", False),
    ],
)
def test_which_datasets_or_methods_are_used_most_is_refused_with_why(
    question: str, ranking: bool
) -> None:
    assert asks_usage_ranking(question) is ranking


def test_a_usage_ranking_is_refused_with_a_way_forward(answerer) -> None:  # type: ignore[no-untyped-def]
    answer = answerer.answer("What are the most common datasets at ICML 2025?")
    assert answer.refused and answer.refusal_reason == USAGE_REASON
    assert "How many papers use" in USAGE_REASON


@pytest.mark.parametrize(
    ("sentence", "kind", "names"),
    [
        ("We evaluate FooNet on the QuartzBench benchmark.", "benchmarks", True),
        ("Results on benchmarks like QZR-1 and QZR-2 improve.", "benchmarks", True),
        ("It runs 3x faster on RTX3060 and A100 GPUs.", "GPUs", True),
        # A model far from the word for the kind is no instance of it.
        (
            "Using the BarLM-7B backbone, FooNet gains 3 points on two benchmarks.",
            "benchmarks",
            False,
        ),
        ("BarLM-70B inference over 8 GPUs is 20% faster.", "GPUs", False),
        # The paper's own method, and a kind said without a name, name nothing.
        ("FooNet sets the state of the art on several benchmarks.", "benchmarks", False),
        ("We release a benchmark of tiled quartz images.", "benchmarks", False),
    ],
)
def test_a_sentence_names_an_instance_of_a_kind_where_it_stands_by_the_kind(
    sentence: str, kind: str, names: bool
) -> None:
    from rag.answer.refusal import names_an_instance

    abstract = f"We propose FooNet, a tiling method. {sentence}"
    question = f"Which {kind} do the papers on tiling use?"
    assert names_an_instance(sentence, kind, question, "Tiling", abstract, _weights()) is names


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("Which university has the most papers?", True),
        ("What companies publish the most papers at ICML 2025?", True),
        ("How many papers come from each country?", True),
        ("What are the authors' affiliations?", True),
        ("Which labs contributed papers on quartz tiling?", True),
        ("Which countries does the FooNet dataset cover?", False),
        ("Which paper uses a robot lab?", False),
        ("What is the role of the company in the game?", False),
    ],
)
def test_where_papers_come_from_is_not_recorded(question: str, asks: bool) -> None:
    from rag.answer.refusal import asks_institutions

    assert asks_institutions(question) is asks


def test_a_question_about_affiliations_is_refused_with_why(answerer) -> None:  # type: ignore[no-untyped-def]
    from rag.answer.refusal import INSTITUTION_REASON

    answer = answerer.answer("Which university has the most papers?")
    assert answer.refused and answer.refusal_reason == INSTITUTION_REASON
    assert answer.citations == []


@pytest.mark.parametrize(
    ("message", "talk"),
    [
        ("Hello", True),
        ("Thanks!", True),
        ("thank you so much!", True),
        ("ok, great", True),
        ("Hi there", True),
        ("Good morning :)", True),
        ("Thanks to what?", False),
        ("Hello, what does FooNet do?", False),
        ("ok, and BarNet?", False),
    ],
)
def test_small_talk_is_told_from_questions(message: str, talk: bool) -> None:
    assert small_talk(message) is talk


def test_small_talk_is_refused_without_a_search_whatever_came_before(answerer) -> None:  # type: ignore[no-untyped-def]
    history = [("How much does Cake cut time to first token?", "By 2.6x [1].")]
    for message, turns in (("Hello", []), ("Thanks!", history)):
        answer = answerer.answer(message, history=turns)
        assert answer.refused and answer.refusal_reason == SMALL_TALK_REASON, message
        assert answer.citations == [] and answer.related == [], message


def test_a_year_is_stated_by_a_year_written_as_a_number() -> None:
    question = "Who first proposed the Quartz loss that FooNet extends, and in which year?"
    dated = "The Quartz loss was proposed by Lee et al. (2010). FooNet extends the Quartz loss."
    undated = "The Quartz loss was proposed by Lee et al. FooNet extends it to 2048 tokens."
    assert _verdict(question, dated).answerable
    refused = _verdict(question, undated)
    assert not refused.answerable and "year" in refused.reason


def test_what_happens_asks_for_no_thing_of_its_own() -> None:
    assert asked_phrases("What happens to FooNet as its tilt grows?", ["FooNet"]) == []
    assert asked_phrases("What tilt does FooNet use?", ["FooNet"]) == ["tilt"]


def test_a_question_word_after_a_verb_of_choosing_asks_how_the_choice_is_made() -> None:
    assert asked_phrases("What does FooNet rely on to decide which tokens to drop?") == []
    assert asked_phrases("How does it choose what layers to prune, and what speedup?") == [
        "speedup"
    ]
    assert asked_phrases("Which examples does FooNet keep?") == ["examples"]


def test_a_name_no_retrieved_paper_mentions_is_reported() -> None:
    text = "FooNet detects objects. BarNet (Quartz Region Net) segments them."
    assert unmentioned_name("How do FooNet and BazDet compare?", text) == "BazDet"
    assert unmentioned_name("How do FooNet and BarNet compare?", text) is None


def test_a_comparison_or_summary_of_what_no_paper_mentions_is_refused(answerer) -> None:  # type: ignore[no-untyped-def]
    for question, mode in (
        ("How do BazDet and Cake compare?", "compare"),
        ("Summarize the BazDet work on KV cache loading", "ask"),  # summarized: its intent says so
    ):
        answer = answerer.answer(question, mode=mode)
        assert answer.mode in ("compare", "summarize"), question
        assert answer.refused and answer.refusal_reason == "the papers never mention BazDet"
    assert not answerer.answer("How do Cake and DreamDPO compare?", mode="compare").refused


def test_which_thing_is_answered_by_a_name_where_the_rest_of_the_question_is_stated() -> None:
    # "Which solver runs on the shrunk instances": the abstract names the one it calls
    # ("QuartzSAT") where it says what the rest of the question says, without the word "solver".
    abstract = "FooNet shrinks every instance first. QuartzSAT then runs on the shrunk instances."
    question = "Which solver runs on the shrunk instances in FooNet?"
    verdict = _verdict(question, abstract)
    assert verdict.answerable, verdict.reason
    # No name where the rest is stated, or a name written elsewhere, answers nothing.
    unnamed = "FooNet shrinks every instance first. A classic search then runs on the shrunk ones."
    assert not _verdict(question, unnamed).answerable
    elsewhere = "FooNet shrinks every instance, unlike QuartzSAT. Then it runs on shrunk instances."
    assert not _verdict(question, elsewhere).answerable


def test_an_adjective_made_from_a_name_is_no_missing_name() -> None:
    # "Euclidean" describes; the papers need not write it for the question to be answerable.
    retrieved = "QuartzMech adds Laplace noise sized by the l2 sensitivity of each count."
    question = "Which noise does QuartzMech add for a Euclidean bound?"
    assert unmentioned_name(question, retrieved) is None
    assert unmentioned_name("Which noise does BarMech add?", retrieved) == "BarMech"


def test_a_verb_of_an_event_after_the_noun_ends_the_asked_phrase() -> None:
    question = "Which pooling goes first in FooNet's tile sorting?"
    assert asked_phrases(question) == ["pooling"]
    abstract = "FooNet sorts tiles after a max pooling of their cells."
    assert _verdict(question, abstract).answerable


def test_parts_and_ingredients_name_the_kind_of_answer() -> None:
    for kind in ("module", "ingredient", "structure"):
        assert asked_phrases(f"Which {kind} does FooNet add to the tiler?") == []
    assert asked_phrases("What search structure does FooNet rely on?") == ["search"]
    abstract = "FooNet relies on a beam search and condenses tiles with QZFormer."
    assert _verdict("What search structure does FooNet rely on?", abstract).answerable
    # A topic may study structures as such.
    assert "structur" in topic_terms("papers on protein structure design", _weights())


def test_a_sentence_that_states_beside_a_question_asks_nothing() -> None:
    question = "Both shrink what phones upload. Which tiles does FooNet skip, and why?"
    assert asking_parts(question) == ["Which tiles does FooNet skip", "why"]
    # Without a question mark, a sentence that ends in a period is the request.
    assert asking_parts("Tell me what FooNet skips.") == ["Tell me what FooNet skips."]
    abstract = "FooNet skips empty tiles, so that handsets transmit less."
    assert _verdict(question, abstract).answerable


def test_the_parts_of_a_question_the_papers_state_are_reported_with_its_refusal() -> None:
    abstract = (
        "FooNet skips empty tiles, so that handsets transmit less. "
        "On the QZ-Tiles benchmark it halves the uploaded bytes."
    )
    question = "Which benchmark is FooNet tested on, and what warm-up length does its training use?"
    verdict = _verdict(question, abstract)
    assert not verdict.answerable
    assert "warm-up length" in verdict.reason
    assert verdict.answered == "Which benchmark is FooNet tested on?"
    assert _verdict(verdict.answered, abstract).answerable
    # A sentence that states stays with the parts it leads to; each part asks on its own.
    led = "Both shrink uploads. Which benchmark is FooNet tested on, and what warm-up length?"
    assert (
        _verdict(led, abstract).answered
        == "Both shrink uploads. Which benchmark is FooNet tested on?"
    )
    assert with_parts("a, b?", ["how many tiles"]) == "How many tiles?"
    # Nothing asked is stated: no part to answer; one part: the refusal alone.
    both = "What warm-up length does FooNet use, and what batch size?"
    assert not _verdict(both, abstract).answerable
    assert _verdict(both, abstract).answered == ""
    alone = _verdict("What warm-up length does FooNet's training use?", abstract)
    assert not alone.answerable and alone.answered == ""


def test_code_that_modifies_another_word_asks_for_no_code() -> None:
    # "code-writing" says what the models do; the question asks for a benchmark.
    question = "FooNet tunes code-writing models. Which dataset is made available with FooNet?"
    abstract = "We present FooNet and publish QuartzSet, a dataset of tiling tasks."
    assert _verdict(question, abstract).answerable
    # Asking for the code itself still needs a link.
    refused = _verdict("Is the code of FooNet public?", abstract)
    assert not refused.answerable and "no link to code" in refused.reason


def test_a_branch_of_a_field_names_the_kind_of_answer() -> None:
    assert asked_phrases("Which branch of algebra describes FooNet's tilings?", ["FooNet"]) == []
    abstract = "FooNet describes its tilings with group theory."
    assert _verdict("Which branch of algebra describes FooNet's tilings?", abstract).answerable


def test_mechanisms_and_equations_of_a_named_paper_are_named_by_it() -> None:
    question = "Which privacy mechanisms does FooNet cover?"
    assert named_kinds(question, named_paper=True) == [("privacy", "mechanisms")]
    # The abstract names them without the question's modifier ("privacy").
    assert _verdict(question, "FooNet covers the Quartz and Zircon mechanisms.").answerable
    refused = _verdict(question, "FooNet covers perturbations of counts.")
    assert not refused.answerable and refused.reason.endswith("not name the mechanisms")
    # A count alone does not narrow the kind: the mechanisms may be described.
    assert named_kinds("What three mechanisms does FooNet rely on?", named_paper=True) == []
    equations = "Which scaling equations does FooNet obtain?"
    assert _verdict(equations, "FooNet obtains a scaling SDE and ODE for the loss.").answerable
    assert not _verdict(equations, "FooNet obtains bounds on the loss.").answerable


def test_a_followup_asks_in_its_own_words_even_where_the_title_uses_them() -> None:
    # The paper was named by its title in an earlier turn; "errors" and "list" are the
    # follow-up's own words, and the abstract states how many errors it lists.
    title = "Quartz curves of FooSGD: listing its errors"
    abstract = "We study FooSGD at scale. We list four errors of FooSGD."
    hit = PaperHit("p1", title, [], "", "", 1.0)
    passage = ContextPassage(1, hit, [Sentence(abstract, 0, len(abstract), 1.0)])
    asked = "How many errors do they list?"
    verdict = check_answerable(
        f"{title}: {asked}",
        [passage],
        _weights(),
        min_coverage=0.0,
        subject_names=[title],
        abstracts={"p1": abstract},
        subject_papers=["p1"],
        asked=asked,
        followup=True,
    )
    assert verdict.answerable, verdict


def test_hardware_is_named_next_to_its_word() -> None:
    question = "On what GPU was FooNet trained?"
    elsewhere = (
        "We train FooNet on a single GPU machine and then measure whether it tiles the maps "
        "of Quartzland, Zirconia and Europe."
    )
    refused = _verdict(question, elsewhere)
    assert not refused.answerable and refused.reason.endswith("not name the GPU")
    assert _verdict(question, "We train FooNet on eight QZ-9 GPUs in two days.").answerable


def test_a_sentence_that_puts_the_kind_in_other_words_names_one() -> None:
    # "structures" says "architectures" (the embeddings put them close; a table here).
    near = _near_by_table({"architectures": ("structures", 0.6)})
    question = "Which tiler architectures does FooNet build on?"
    named = "FooNet gains on all model structures tried (QZ-Net, ZirNet and Ambo-Net)."
    assert _verdict(question, named, near=near).answerable
    # Without a word of the kind, its names are no answer.
    bare = "FooNet gains on every model tried (QZ-Net, ZirNet and Ambo-Net)."
    refused = _verdict(question, bare, near=near)
    assert not refused.answerable and refused.reason.endswith("not name the architectures")
    # A name that is itself close to the kind names one.
    card = _near_by_table({"accelerator": ("Quartzvidia", 0.6)})
    fast = "FooNet runs five times faster on the Quartzvidia Xp."
    assert _verdict("Which accelerator suits FooNet best?", fast, near=card).answerable
    # A close word far from any name names nothing: "Zorb" stands nowhere near "data".
    data = _near_by_table({"datasets": ("data", 0.6)})
    far = "FooNet keeps its data on a smooth manifold that helps many generative Zorb tools."
    refused = _verdict("Which tiling datasets does FooNet run on?", far, near=data)
    assert not refused.answerable and refused.reason.endswith("not name the datasets")
