"""`matches` searched in a killable child process: `re`'s answers, and a backtracking pattern cut at its deadline."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from resources_qt.project import ProjectError, load_project
from resources_qt.testing.expectations import evaluate
from resources_qt.testing.observed import ObservedContent, ObservedRead
from resources_qt.testing.regex import RegexSearcher, RegexTimeout
from resources_qt.testing.spec import Expectation

CATASTROPHIC = "(a|aa)+b"
"""42 s against 40 characters in `re` (measured), holding the GIL all along."""


@pytest.fixture(scope="module")
def searcher() -> Iterator[RegexSearcher]:
    with RegexSearcher(deadline=0.5) as started:
        yield started


ORDINARY = [
    ("(?m)^second", "first\nsecond"),
    ("^second", "first\nsecond"),
    (r"\w+é\b", "café au lait"),  # Unicode \w and \b, as `re` has them for str patterns
    (r"\d{3}", "٣٤٥"),  # Arabic-Indic digits are \d to `re`
    ("(?i)HELLO", "hello"),
    (r"(a)\1", "aa"),  # a backreference
    (r"foo(?=bar)", "foobaz"),  # a lookahead
    (r"(?s)a.b", "a\nb"),
    (r"a.b", "a\nb"),
    ("", ""),
]


@pytest.mark.parametrize(("pattern", "text"), ORDINARY)
def test_ordinary_patterns_answer_as_re_does(searcher: RegexSearcher, pattern: str, text: str) -> None:
    assert searcher.search(pattern, text) is (re.search(pattern, text) is not None)


def test_a_backtracking_search_is_cut_at_its_deadline_and_the_next_one_is_answered(searcher: RegexSearcher) -> None:
    searcher.search("x", "x")
    started = searcher.started
    with pytest.raises(RegexTimeout, match=r"timed out after 0\.5 s"):
        searcher.search(CATASTROPHIC, "a" * 40)
    assert searcher.search("b$", "aab") and searcher.started == started + 1  # a new child took over


def test_an_invalid_pattern_is_re_error(searcher: RegexSearcher) -> None:
    with pytest.raises(re.error, match="unterminated subpattern"):
        searcher.search("(unclosed", "x")
    assert searcher.search("x", "x")


def test_searches_from_several_threads_each_get_their_own_answer(searcher: RegexSearcher) -> None:
    answers: dict[int, bool] = {}

    def search(index: int) -> None:
        answers[index] = searcher.search(f"^{index}$", str(index if index % 2 else index + 1))

    threads = [threading.Thread(target=search, args=(index,)) for index in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert answers == {index: bool(index % 2) for index in range(8)}


def test_evaluate_names_the_test_and_the_expectation_that_timed_out(searcher: RegexSearcher) -> None:
    observed = ObservedRead(uri="t://x", contents=(ObservedContent(uri="t://x", mime_type="text/plain",
                                                                   text="a" * 40),))
    failures = evaluate(Expectation(matches=CATASTROPHIC, contains="a"), observed, searcher=searcher, test="slow")
    assert failures == [f"matches: timed out after 0.5 s in test 'slow': /{CATASTROPHIC}/ against the text "
                        "(40 characters) did not finish; a pattern that backtracks this much needs rewriting"]
    assert evaluate(Expectation(matches="a{40}"), observed, searcher=searcher) == []


def test_the_loader_refuses_an_invalid_pattern_pointing_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('format = 1\n\n[[resources]]\nname = "g"\nuri = "t://g"\n\n'
                    '[[tests]]\nname = "bad"\nuri = "t://g"\nexpect = { matches = "(a|b" }\n')
    with pytest.raises(ProjectError) as raised:
        load_project(path)
    assert str(raised.value).startswith(f"{path}:10: test 'bad': expect.matches is not a valid regular expression")
