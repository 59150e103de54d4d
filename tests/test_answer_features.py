"""Properties of the extractive answer's sentence features, its fitted model and abstention.

They state what must always hold (bounded, monotone, a profile off means its features off,
flawed lines never quoted, a bad model file refused), not today's weights.
"""

from __future__ import annotations

import asyncio
import json
import math
from importlib import resources

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragloop.config import Context
from ragloop.documents import parse_file
from ragloop.errors import ConfigError
from ragloop.graph.result import RunResult
from ragloop.nodes.answer import NOT_ANSWERED, answer_step
from ragloop.nodes.answer_model import Abstention, AnswerModel, from_dict
from ragloop.nodes.lines import (
    choose_profile,
    corpus_boilerplate,
    is_code,
    is_question,
    is_toc,
    key,
    repeated_sentences,
    table_rows,
)
from ragloop.nodes.offline import OfflineStrategies
from ragloop.nodes.question import QUESTION_FEATURES, question_features
from ragloop.nodes.sentences import (
    FEATURES,
    GENRE,
    flawed,
    quotable,
    sentence_table,
    signature_before,
)
from ragloop.state import ContextItem
from ragloop.text import split_sentences
from tests.fakes.embeddings import HashEmbeddings

WORDS = st.sampled_from(
    [
        "the",
        "index",
        "table",
        "rebuild",
        "column",
        "value",
        "returns",
        "abs",
        "function",
        "query",
        "set",
        "flag",
        "of",
        "a",
        "to",
        "REINDEX",
        "abs(X)",
        "os.path",
        "cd",
        "PRAGMA",
    ]
)
SENTENCE = st.lists(WORDS, min_size=4, max_size=14).map(lambda ws: " ".join(ws) + ".")


def ctx(n: int, title: str, *sentences: str) -> ContextItem:
    return ContextItem(id=f"c{n}", title=title, text=f"# {title}\n\n" + " ".join(sentences))


def table(question: str, contexts: list[ContextItem], **kw):  # type: ignore[no-untyped-def]
    return asyncio.run(sentence_table(HashEmbeddings(dim=64), question, contexts, **kw))


@settings(max_examples=30, deadline=None)
@given(q=SENTENCE, a=st.lists(SENTENCE, min_size=1, max_size=4), b=SENTENCE)
def test_every_feature_is_bounded(q: str, a: list[str], b: str) -> None:
    _, x = table(q, [ctx(1, "abs", *a), ctx(2, "REINDEX › Description", b)])
    cos = [i for i, name in enumerate(FEATURES) if name.endswith("cosine")]
    others = [i for i in range(len(FEATURES)) if i not in cos]
    assert np.all(np.isfinite(x))
    assert np.all((x[:, cos] >= -1 - 1e-6) & (x[:, cos] <= 1 + 1e-6))
    assert np.all((x[:, others] >= 0) & (x[:, others] <= 1))


@settings(max_examples=30, deadline=None)
@given(ev=st.lists(st.floats(0, 1), min_size=1, max_size=4), s=SENTENCE)
def test_evidence_gap_ranks_each_passage_against_the_best_read(ev: list[float], s: str) -> None:
    contexts = [{**ctx(n, f"T{n}", s), "evidence": e} for n, e in enumerate(ev, start=1)]
    quotes, x = table("What does abs() do?", contexts)
    gap = x[:, FEATURES.index("evidence_gap")]
    assert np.all((gap >= 0) & (gap <= 1))
    for q, g in zip(quotes, gap, strict=True):
        assert g == pytest.approx(max(ev) - ev[q.n - 1])  # 0 for the best-evidence passage
    # without the judge's evidence (a retriever's top k read as it comes) there is no gap
    _, plain = table("What does abs() do?", [ctx(n, f"T{n}", s) for n in range(1, len(ev) + 1)])
    assert not plain[:, FEATURES.index("evidence_gap")].any()


@settings(max_examples=30, deadline=None)
@given(a=st.lists(SENTENCE, min_size=1, max_size=4), profile=st.sampled_from(["guide", "generic"]))
def test_a_profile_without_genre_features_never_gives_them(a: list[str], profile: str) -> None:
    contexts = [ctx(1, "abs", "abs(X) — return the absolute value of X.", *a)]
    _, x = table("What does abs() do?", contexts, profile=profile)
    for name in GENRE:
        assert not x[:, FEATURES.index(name)].any()


def test_naming_the_questions_name_never_lowers_the_name_feature() -> None:
    plain = ctx(1, "Functions", "This returns the absolute value of a number.")
    named = ctx(1, "Functions", "The abs function returns the absolute value of a number.")
    col = FEATURES.index("name_sentence")
    q = "What does abs() do?"
    assert table(q, [named])[1][0, col] >= table(q, [plain])[1][0, col]


@settings(max_examples=40, deadline=None)
@given(s=SENTENCE)
def test_a_model_is_monotone_in_a_feature_with_a_positive_weight(s: str) -> None:
    model = AnswerModel(coef={"cosine": 3.0, "code": -2.0}, intercept=-1.0)
    x = np.zeros((2, len(FEATURES)))
    x[1, FEATURES.index("cosine")] = 0.5
    p = model.probability(x)
    assert 0 < p[0] < p[1] < 1


def test_toc_lines_code_blocks_and_boilerplate_are_never_quoted() -> None:
    boiler = "This page is part of the documentation suite of the project."
    contexts = [
        ctx(1, "Index", "9 asn1_der_coding . . . . . . . . 12"),
        ctx(2, "abs", "```\nabs(X)\n```\n\nThe abs function returns the absolute value."),
        ctx(3, "Other", boiler + " Unrelated text about tables here."),
    ]
    strategies = OfflineStrategies(HashEmbeddings(dim=64), boilerplate=frozenset({key(boiler)}))
    found = asyncio.run(strategies.extract("what does abs return", contexts))
    assert ". . . ." not in found.text and boiler not in found.text
    assert "returns the absolute value" in found.text
    assert found.text.startswith("`abs(X)`: ")  # the signature shown with its description


def test_a_question_in_the_passages_is_never_the_answer() -> None:
    contexts = [
        ctx(1, "Care Plus", "Would I pay for Care Plus again with my own money?"),
        ctx(2, "Payment", "Care Plus is paid monthly by card or by bank transfer."),
    ]
    strategies = OfflineStrategies(HashEmbeddings(dim=64))
    found = asyncio.run(strategies.extract("Would I pay for Care Plus again?", contexts))
    assert "Would I pay" not in found.text and "paid monthly" in found.text
    assert is_question("Does it work?") and is_question("Really?  ")
    assert not is_question('He asked "why?"') and not is_question("Use ? as a wildcard.")


def test_line_kinds() -> None:
    assert is_toc("9 asn1_der_coding . . . . . . . . 12") and not is_toc("Ends here.")
    assert is_code("```\nx = 1\n```") and is_code("os.setresgid(rgid, egid, sgid)")
    assert not is_code("DROP PROCEDURE — remove a procedure")


def test_an_index_or_table_block_is_a_toc_line_and_never_the_answer() -> None:
    index = "S\nset: | The Set Builtin\nshift: | Bourne Shell Builtins\nT\ntest: | Bourne Shell"
    table = "From | To | Use\nseconds since the epoch | struct_time in UTC | gmtime()"
    jump = "Jump to: | . : [ A B C D E F G H J K L M P R S T U W"
    assert is_toc(index) and is_toc(table) and is_toc(jump)
    # prose stays quotable: one line, a heading-like word over a sentence, a pipe inside prose
    assert not is_toc("Run a | b to pipe the output of a into b.")
    assert not is_toc("Note\nThe unalias builtin removes each name from the list of aliases.")
    contexts = [
        ctx(1, "Index of Shell Builtin Commands", index.replace("test:", "unalias:")),
        ctx(2, "Bash Builtins", "The unalias builtin removes each name from the list of aliases."),
    ]
    found = asyncio.run(
        OfflineStrategies(HashEmbeddings(dim=64)).extract("What does unalias do?", contexts)
    )
    assert "removes each name" in found.text and "| Bash" not in found.text


def test_a_table_row_that_reads_as_prose_may_be_the_answer(tmp_path) -> None:
    # a simple table is read as one block of rows; the block is never quoted, but a row of it
    # is a sentence of its own, quoted when it reads as prose
    page = tmp_path / "settings.md"
    page.write_text(
        "# Settings\n\nEach setting has an environment variable.\n\n"
        "| Setting | Environment | Meaning |\n|---|---|---|\n"
        "| retries | `APP_RETRIES` | how many times a failed request is sent again |\n"
        "| timeout | `APP_TIMEOUT` | the seconds to wait for a reply before giving up |\n"
        "| colour | `APP_COLOUR` | whether the output is in colour |\n",
        encoding="utf-8",
    )
    section = next(s for s in parse_file(page).sections if "APP_TIMEOUT" in s.text)
    block = next(b for b in split_sentences(section.text) if "APP_TIMEOUT" in b)
    assert is_toc(block) and len(table_rows(block)) == 4  # the header row and three rows
    contexts = [ContextItem(id="c1", title="Settings", text=section.text)]
    rows = [q.sentence for q in quotable(contexts)]
    assert "timeout | APP_TIMEOUT | the seconds to wait for a reply before giving up" in rows
    assert all("\n" not in r for r in rows)
    header = next(q for q in quotable(contexts) if q.sentence.startswith("Setting |"))
    assert flawed(header, frozenset())  # a header row of names is no prose: never quoted
    found = asyncio.run(
        OfflineStrategies(HashEmbeddings(dim=64)).extract(
            "How many seconds does it wait for a reply before giving up?", contexts
        )
    )
    assert "timeout | APP_TIMEOUT | the seconds to wait" in found.text, found.text
    assert "Setting | Environment" not in found.text


def test_an_option_line_is_shown_with_the_description_it_introduces() -> None:
    # a man page converted to HTML: the option is a paragraph, its description the next one
    text = (
        "# GREP › OPTIONS\n\n-f FILE, --file=FILE\n\nObtain patterns from FILE, one per line."
        "\n\n-i, --ignore-case\n\nIgnore case distinctions in patterns and input data."
    )
    contexts = [ContextItem(id="c1", title="GREP", text=text)]
    strategies = OfflineStrategies(HashEmbeddings(dim=64))
    found = asyncio.run(strategies.extract("How do I make grep ignore case?", contexts))
    assert found.text.startswith("`-i, --ignore-case`: Ignore case distinctions"), found.text
    by = {q.sentence: q for q in quotable(contexts)}
    obtain = by["Obtain patterns from FILE, one per line."]
    assert signature_before(obtain) == "-f FILE, --file=FILE"
    # a line of prose that starts with a dash, or a word alone, is no option line
    prose = "-1 is returned when the pattern is empty.\n\nThe caller checks the value.\n\nNote"
    other = [ContextItem(id="c2", title="T", text=prose + "\n\nThe value is kept as it is.")]
    assert [signature_before(q) for q in quotable(other)] == [None, None, None]


def test_only_a_block_of_cell_rows_is_a_table() -> None:
    rows = "a | b | c\nd | e | f"
    assert table_rows(rows) == ["a | b | c", "d | e | f"]
    assert table_rows("S\nset: | The Set Builtin\nshift: | Bourne Shell Builtins") == [
        "set: | The Set Builtin",
        "shift: | Bourne Shell Builtins",
    ]
    assert table_rows("Run a | b to pipe the output of a into b.") == []  # one line: prose
    assert table_rows("```\nx | y\nz | w\n```") == []  # a code block stays whole
    assert table_rows("Note\nThe unalias builtin removes each name.") == []
    assert table_rows("A\nB\nC\nx | y") == []  # mostly index letters: no table


def test_a_sentence_is_quoted_once_also_when_a_chunk_holds_only_its_start() -> None:
    # overlapping chunks: the first ends inside the sentence the second holds whole
    whole = "The shell does not reset OPTIND automatically between calls to getopts."
    contexts = [
        ctx(1, "getopts", "getopts places that argument into OPTARG. " + whole[:48]),
        ctx(2, "getopts", whole + " OPTIND is set to the index of the first non-option."),
        ctx(3, "getopts", "OPTIND is reset by hand between calls when getopts runs again."),
    ]
    model = AnswerModel(coef={"cosine": 1.0}, intercept=0.0, floor_share=0.01)
    strategies = OfflineStrategies(HashEmbeddings(dim=64), answer_model=model)
    found = asyncio.run(strategies.extract("Does the shell reset OPTIND for getopts?", contexts))
    assert found.text.count("does not reset OPTIND") == 1, found.text


def test_repeated_sentences_are_those_a_fifth_of_the_pages_share() -> None:
    line = "Part of the Example documentation suite."
    units = [(f"p{i}", f"{line} Page {i} says something of its own.") for i in range(10)]
    units += [(f"q{i}", "Only here is this sentence written down.") for i in range(1)]
    found = repeated_sentences(units)
    assert key(line) in found and key("Only here is this sentence written down.") not in found


def test_a_template_each_page_fills_in_with_its_own_name_is_boilerplate() -> None:
    # a man page's footer names its own command; the same line with another name is on
    # every page of the suite
    footer = "Full documentation is available locally via: info '(coreutils) {} invocation'."
    names = ["touch", "stat", "head", "fold", "tail", "sort"] + [f"tool{i}" for i in range(20)]
    chunks = [
        (f"/docs/{n}.html", n.upper(), f"{footer.format(n)} The {n} command does job {i}.")
        for i, n in enumerate(names)
    ]
    found = corpus_boilerplate(chunks)
    assert all(key(footer.format(n)) in found for n in names)
    assert key("The touch command does job 0.") not in found  # names its page, but once
    # without pages (one long manual's sections) nothing is left out of the comparison
    assert not repeated_sentences((c, t) for c, _, t in chunks)


def test_the_profile_is_reference_for_entry_lines_and_guide_for_prose() -> None:
    entries = [f"name{i}(x) — return something about x number {i}." for i in range(60)]
    prose = [f"In this chapter we explain topic {i} at some length." for i in range(60)]
    assert choose_profile(entries)[0] == "reference"
    assert choose_profile(prose)[0] == "guide"
    assert choose_profile(prose[:5])[0] == "generic"


def test_weak_evidence_says_not_found_with_see_also_and_strong_does_not() -> None:
    contexts = [ctx(1, "Tables", "A table holds rows of values in columns.")]
    shy = OfflineStrategies(HashEmbeddings(dim=64))
    shy.not_found_below = math.inf
    text, cited, nf = asyncio.run(answer_step(shy, "How tall is a giraffe?", contexts, Context()))
    assert nf and text.startswith(NOT_ANSWERED) and cited == [1] and "Tables [1]" in text
    bold = OfflineStrategies(HashEmbeddings(dim=64))
    bold.not_found_below = -math.inf
    assert not asyncio.run(answer_step(bold, "What holds rows?", contexts, Context()))[2]


def test_run_result_carries_not_found() -> None:
    state = {"question": "q", "answer": "a", "not_found": True, "stop_reason": "not_found"}
    assert RunResult.from_state(state).to_dict()["not_found"] is True
    assert RunResult.from_state({"question": "q"}).not_found is False


@pytest.mark.parametrize(
    "data",
    [
        {"kind": "pickle"},
        {"kind": "logistic", "coef": {"unknown": 1.0}, "intercept": 0.0},
        {"kind": "logistic", "coef": {"cosine": float("nan")}, "intercept": 0.0},
        {"kind": "logistic", "coef": {"cosine": 1.0}, "intercept": "0"},
    ],
)
def test_a_bad_model_file_is_refused_clearly(data: dict) -> None:
    with pytest.raises(ConfigError, match="answer model"):
        from_dict(data)


@settings(max_examples=50, deadline=None)
@given(
    p=st.lists(st.floats(0, 1), max_size=12),
    c=st.lists(st.floats(-1, 1), max_size=12),
    ev=st.lists(st.floats(0, 1), max_size=6),
)
def test_question_features_are_bounded_and_ordered(
    p: list[float], c: list[float], ev: list[float]
) -> None:
    f = question_features(np.array(p), np.array(c), ev)
    assert set(f) == set(QUESTION_FEATURES)
    assert all(0 <= f[k] <= 1 for k in ("best", "second", "top_mean", "evidence_max"))
    assert all(-1 <= f[k] <= 1 for k in ("cosine_max", "cosine_mean"))
    assert f["second"] <= f["best"] and f["top_mean"] <= f["best"] + 1e-12
    assert f["cosine_mean"] <= f["cosine_max"] + 1e-12
    # the order the sentences come in changes nothing
    assert question_features(np.array(p[::-1]), np.array(c[::-1]), ev[::-1]) == f


def test_judged_passages_use_the_judged_abstention_fit_and_others_the_unjudged() -> None:
    never, always = Abstention({}, 0.0, level=0.0), Abstention({}, 0.0, level=1.0)
    model = AnswerModel(
        coef={"cosine": 1.0}, intercept=0.0, abstain={"judged": always, "unjudged": never}
    )
    strategies = OfflineStrategies(HashEmbeddings(dim=64), answer_model=model)
    plain = [ctx(1, "Tables", "A table holds rows of values in columns.")]
    judged = [ContextItem(**plain[0], evidence=0.9, grade=2)]
    q = "What holds rows?"
    assert asyncio.run(answer_step(strategies, q, judged, Context()))[2]
    assert not asyncio.run(answer_step(strategies, q, plain, Context()))[2]


def test_a_higher_support_never_turns_an_answer_into_not_found() -> None:
    fit = Abstention({"best": 4.0, "evidence_max": 2.0}, -3.0, level=0.5)
    low = {"best": 0.2, "evidence_max": 0.1}
    high = {"best": 0.6, "evidence_max": 0.1}
    assert fit.probability(high) >= fit.probability(low)


def test_a_bad_abstention_fit_is_refused_clearly() -> None:
    base = {"kind": "logistic", "coef": {"cosine": 1.0}, "intercept": 0.0}
    for abstain in (
        {"sometimes": {"coef": {}, "intercept": 0.0, "level": 0.5}},
        {"judged": {"coef": {"cosine": 1.0}, "intercept": 0.0, "level": 0.5}},
        {"judged": {"coef": {"best": 1.0}, "intercept": 0.0}},
    ):
        with pytest.raises(ConfigError, match="answer model"):
            from_dict({**base, "abstain": abstain})


def test_a_model_round_trips_through_its_json_form() -> None:
    model = AnswerModel(coef={"cosine": 2.0}, intercept=-1.0, not_found_below=0.2)
    assert from_dict(model.to_dict()) == model
    fit = Abstention({"best": 3.0, "evidence_max": 1.0}, -2.0, 0.4)
    with_fit = AnswerModel(coef={"cosine": 2.0}, intercept=-1.0, abstain={"judged": fit})
    assert from_dict(with_fit.to_dict()) == with_fit
    linear = AnswerModel(coef={"cosine": 1.0}, intercept=0.0, link="identity")
    assert from_dict(linear.to_dict()) == linear
    x = np.zeros((1, len(FEATURES)))
    x[0, FEATURES.index("cosine")] = 0.4
    assert linear.probability(x)[0] == pytest.approx(0.4)  # the linear score itself


def test_the_shipped_model_serves_only_the_embedding_model_it_was_fitted_on() -> None:
    from ragloop.nodes.answer_model import load_model

    shipped = load_model()
    assert shipped is not None and 0 <= shipped.not_found_below < 1
    for judged in (True, False):
        fit = shipped.abstention(judged)
        assert fit is not None and 0 < fit.level < 1
    fitted_on = shipped.provenance["embeddings_model"]
    assert load_model(embeddings_model=fitted_on) == shipped
    assert load_model(embeddings_model="some-other-model") is None


def test_each_shipped_fit_serves_its_own_embedding_model(tmp_path) -> None:
    """``answer_model.<name>.json`` files serve the embedding model their provenance names;
    the default fit still serves its own, and a model with no fit gets none."""
    from ragloop.nodes.answer_model import SHIPPED, load_model, model_for_index, shipped_files

    names = shipped_files()
    assert names[0] == SHIPPED and len(names) >= 2
    default = load_model()
    assert default is not None
    seen = {default.provenance["embeddings_model"]}
    for name in names[1:]:
        data = json.loads(resources.files("ragloop.data").joinpath(name).read_text())
        fitted_on = data["provenance"]["embeddings_model"]
        assert fitted_on not in seen, f"two shipped fits for {fitted_on}"
        seen.add(fitted_on)
        model = load_model(embeddings_model=fitted_on)
        assert model is not None and model != default
        assert model.provenance["embeddings_model"] == fitted_on
        assert model.abstention(True) is not None and model.stop_level is not None
        chosen, why = model_for_index(tmp_path, fitted_on)  # an index with no calibration
        assert chosen == model and why.startswith("shipped fit")
    assert model_for_index(tmp_path, "no-such-model")[0] is None


def test_a_guide_full_of_code_examples_is_no_reference_manual() -> None:
    # a tutorial's programs call functions on most lines; a reference sets one signature as
    # code and describes it: only the latter is an entry line
    program = "\n".join(
        ["```rust", "fn main() {", "    let handle = thread::spawn(move || {", "        work(1);",
         "    });", "    handle.join().unwrap();", "}", "```"]
    )  # fmt: skip
    guide = [
        f"Here is how step {i} runs in a thread.\n\n{program}\n\nThat is all." for i in range(60)
    ]
    reference = [
        f"```\njson.dump{i}(obj, fp, *, skipkeys=False)\n```\n\nSerialize obj to a stream."
        for i in range(60)
    ]
    assert choose_profile(guide)[0] == "guide"
    assert choose_profile(reference)[0] == "reference"
    assert choose_profile(reference[:7] + guide[:53])[0] == "reference"  # 7 of 60 >= a tenth


def test_a_line_of_program_output_is_not_shown_as_a_signature() -> None:
    # a guide sets a program's output in a one-line block before the next paragraph: that
    # line is prose, not the signature of what the paragraph describes
    contexts = [
        ctx(1, "Install", "```\nRust is installed now. Great!\n```\n\nYou also need a linker "
            "that joins the compiled outputs into one file."),
        ctx(2, "abs", "```\nabs(X)\n```\n\nThe abs function returns the absolute value."),
    ]  # fmt: skip
    strategies = OfflineStrategies(HashEmbeddings(dim=64))
    found = asyncio.run(strategies.extract("which linker joins the compiled outputs", contexts))
    assert "You also need a linker" in found.text
    assert "Rust is installed now" not in found.text
    found = asyncio.run(strategies.extract("what does abs return", contexts))
    assert "`abs(X)`: The abs function returns" in found.text


def test_the_answerer_scores_and_records_sentences_with_its_own_corpus_settings() -> None:
    # calibration rows and the bench's rows come from OfflineStrategies.sentence_table, so
    # they carry every corpus setting the answer scores with (profile, boilerplate, names)
    boiler = "This page is part of the documentation suite of the project."
    text = "# abs\n\n```\nabs(X)\n```\n\nThe abs(X) function returns the absolute value."
    contexts = [ContextItem(id="c1", title="abs", text=text), ctx(2, "Other", boiler)]
    question = "What does abs() do?"
    reference = OfflineStrategies(HashEmbeddings(dim=64), boilerplate=frozenset({key(boiler)}))
    guide = OfflineStrategies(HashEmbeddings(dim=64), profile="guide")
    quotes, x_ref = asyncio.run(reference.sentence_table(question, contexts))
    _, x_guide = asyncio.run(guide.sentence_table(question, contexts))
    at = {q.sentence: i for i, q in enumerate(quotes)}
    entry = FEATURES.index("name_entry")
    described = at["The abs(X) function returns the absolute value."]
    assert x_ref[described, entry] > 0
    # the name's own entry line is read in every profile: a guide's glossary or a man
    # page's option list defines a name as a reference does (it is 0 where none does)
    assert x_guide[described, entry] == x_ref[described, entry]
    assert not x_guide[:, FEATURES.index("subject_entry")].any()  # a genre feature
    boilerplate = FEATURES.index("boilerplate")
    assert x_ref[at[boiler], boilerplate] == 1.0 and x_guide[at[boiler], boilerplate] == 0.0


@settings(max_examples=50, deadline=None)
@given(
    known=st.lists(st.sampled_from(["reindex", "pg_dump", "os.path", "kx-217"]), max_size=4),
    foreign=st.lists(st.sampled_from(["pgbouncer", "graphql", "mongodb", "kafka"]), max_size=4),
)
def test_unknown_names_is_the_share_of_names_the_corpus_never_mentions(
    known: list[str], foreign: list[str]
) -> None:
    from ragloop.nodes.evidence import question_names
    from ragloop.nodes.vocabulary import unknown_names

    vocabulary = {"reindex": 3, "pg_dump": 1, "os.path": 2, "kx-217": 1, "table": 40}
    names = [f"`{n}`" for n in [*known, *foreign]]
    question = "How do I use " + " and ".join(names or ["a table"]) + "?"
    share = unknown_names(question, vocabulary)
    asked = question_names(question)
    assert 0.0 <= share <= 1.0
    if not asked:
        assert share == 0.0  # a question that names nothing tells nothing
    else:
        assert share == pytest.approx(len(set(foreign)) / len(asked))
    assert unknown_names(question, None) == 0.0  # no vocabulary: no clue either way


def test_a_dotted_or_hyphenated_name_is_mentioned_when_all_its_parts_are() -> None:
    from ragloop.nodes.vocabulary import names_never_mentioned

    vocabulary = {"path": 9, "exists": 3, "card": 2, "52": 1, "read_excel": 1}
    asked = "Does `Path.exists` follow links, and what is `pandas.read_excel`? a `52-card` deck?"
    assert names_never_mentioned(asked, vocabulary) == ["pandas.read_excel"]


def test_a_question_naming_what_the_corpus_never_mentions_is_less_supported() -> None:
    # the shipped fits read unknown_names: the same read sentences support an answer less
    # when the question's names appear nowhere in the corpus (both fits, both models)
    from ragloop.nodes.answer_model import shipped_files

    data = resources.files("ragloop.data")
    for name in shipped_files():
        model = from_dict(json.loads(data.joinpath(name).read_text(encoding="utf-8")))
        assert set(model.abstain) == {"judged", "unjudged"}
        for fit in model.abstain.values():
            asked = question_features(np.array([0.6, 0.3]), np.array([0.5, 0.4]), [0.5])
            unknown = question_features(np.array([0.6, 0.3]), np.array([0.5, 0.4]), [0.5], 1.0)
            assert fit.probability(unknown) < fit.probability(asked)


TABLES = [ctx(1, "Tables", "A table holds rows of values in columns.")]


def wary_of_unknown_names() -> OfflineStrategies:
    """An answerer whose abstention reads only ``unknown_names``, over a corpus of one page."""
    fit = Abstention({"unknown_names": -10.0}, 5.0, level=0.5)
    model = AnswerModel(coef={"cosine": 1.0}, intercept=0.0, abstain={"unjudged": fit})
    vocabulary = {"table": 1, "holds": 1, "rows": 1, "values": 1, "columns": 1}
    return OfflineStrategies(HashEmbeddings(dim=64), answer_model=model, vocabulary=vocabulary)


def test_the_answerer_says_not_found_when_the_question_names_what_the_corpus_never_does() -> None:
    answerer = wary_of_unknown_names()
    asked = "How do I store rows in a table?"
    assert not asyncio.run(answer_step(answerer, asked, TABLES, Context()))[2]
    foreign = "How do I store rows in a MongoDB collection?"
    assert asyncio.run(answer_step(answerer, foreign, TABLES, Context()))[2]


def test_not_found_says_why_and_names_what_no_document_mentions() -> None:
    asked = "How do I store rows in a MongoDB collection?"
    reply, _ = asyncio.run(wary_of_unknown_names().answer(asked, TABLES))
    assert reply.not_found and "< 0.50" in reply.why and "no document mentions MongoDB" in reply.why
    # the answer itself says so too, for a reader who never sees the path
    assert reply == ("The documents do not seem to answer this. None of them mentions "
                     "MongoDB. See also, the closest passages: Tables [1].")  # fmt: skip


def test_see_also_lists_passages_as_one_sentence() -> None:
    from ragloop.nodes.notfound import not_answered, see_also

    items = [see_also({"title": "A › B"}, 2), see_also({"source": "c.md"}, 1)]
    said = not_answered(items)
    assert said.endswith("See also, the closest passages: A › B [2]; c.md [1].")
    assert not said.endswith(";") and said.count(";") == 1
