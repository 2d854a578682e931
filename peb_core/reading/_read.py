"""What a message in prose decides (docs/benchmark.md §2.1): the answer values it states as its
own, its claim that the evidence is complete or incomplete, the requirements and scopes it
names as missing, the answer fields it says it cannot state, and the words it read for each.

A mention of a value is taken as asserted unless its context sets it aside, judged within its
sentence as NegEx and ConText do (a cue's scope runs to a terminator): quoted, a question,
negated, conditional on evidence ("if the review confirms spread, it would be critical"),
reported from a document or person and not adopted, or a mere possibility. Advice is the
message's own claim ("treat it as critical"), also under a condition on the user's own
circumstances ("if you have to act now"). A one-word value too common to stand alone (an
ordinal's `high`, `critical`) counts only in a frame ("it is critical"), beside its field's
name, under a label ("Severity: high") or after advice."""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from rapidfuzz import fuzz

from ..tasks import ScenarioFile, Task, phrase_words
from ._lexicon import CueKind, Cues, Lexicon, Match, Tag, Words, cues, lexicon
from ._text import Sentence, Word, normalise, quotes, sentences, words

Completeness = Literal["complete", "incomplete"]
MarkKind = Literal["value", "completeness", "gap", "block", "affected", "set_aside"]
MARK_KINDS: tuple[MarkKind, ...] = (
    "value",
    "completeness",
    "gap",
    "block",
    "affected",
    "set_aside",
)


@dataclass(frozen=True)
class Mark:
    """Words the reader read, as a span of the message: an asserted value (`label`
    `field=value`), a claim of completeness (`complete` | `incomplete`), a gap (the id), a
    refusal (`block`), an affected field (the field), or a value mention set aside (`note`
    says why)."""

    start: int
    end: int
    kind: MarkKind
    label: str
    note: str = ""


AnswerRead = dict[str, str | list[str]]


@dataclass(frozen=True)
class ProseReading:
    """What a message decides. `answer`: None where it blocks (it states no value, and it
    refuses, claims incompleteness or names a gap); `{}` where it states nothing; else the
    fields it states (an ordinal field's value, a set field's distinct values in family order).
    `gaps`: requirement ids, then scope ids, each in family order, named as missing.
    `affected`: the fields it says it cannot state, or that what is missing bears on."""

    answer: AnswerRead | None
    completeness: Completeness | None
    gaps: tuple[str, ...]
    affected: tuple[str, ...]
    marks: tuple[Mark, ...]

    @property
    def placed(self) -> bool:
        """Whether the message decides anything; False is "unreadable"."""
        return not (self.answer == {} and self.completeness is None and not self.gaps)

    def to_json(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "completeness": self.completeness,
            "gaps": list(self.gaps),
        }


_FIRST_PERSON = {"i", "we", "my", "our", "i've", "i'd", "we've", "we'd"}
_SPEAKER = {"i", "my", "i've", "i'd", "i'm"}
"""The message's own voice: a report's scope ends at it ("the note says X, and I say Y"); a
"we" may be the report's object ("counsel suggested we sign")."""
_SUBJECT_FILLER = {"has", "have", "had", "also", "now", "already", "clearly", "itself", "both"}
_NEGATION_REACH = 10
"""How many words a negation before a mention reaches (NegEx uses a window too)."""
_POST_REACH = 6
_SUBJECT_REACH = 4
"""A requirement this close before a framed value is its subject ("the forensic analysis is
critical"): the value is said of the record, not of the answer."""
_CUE_NEGATION_REACH = 6
"""How many words before a missing cue a negation cancels it ("nothing ... is outside my
view")."""
_PRESENT_REACH = 3
"""How many words before a requirement or scope a cue of reading it ("I've read", "including")
reaches."""
_ADOPTION_REACH = 8
_QUALIFIER_REACH = 3
"""How many words after a claim of completeness a qualifier may start ("all the records I can
see")."""
_STRONG_PUNCTUATION = re.compile(r";")
_WEAK_PUNCTUATION = re.compile(r":|\s-\s|\(|\)")
_GAP_WORDS = frozenset({"restricted", "sealed"})
"""Words that, in a scope's own phrase, say it is outside the view ("restricted forensic
workstreams"): naming such a scope names it as missing."""


@dataclass
class _Sentence:
    """One sentence's matches and the clause boundaries within it."""

    sentence: Sentence
    matches: list[Match]
    label: list[Match]
    strong: list[int]
    weak: list[int]
    index: int

    def same(self, a: int, b: int, weak: bool) -> bool:
        """Whether character offsets a and b are in one clause (weak: no terminator at all
        between them; else no strong one)."""
        lo, hi = min(a, b), max(a, b)
        bounds = self.weak if weak else self.strong
        i = bisect.bisect_left(bounds, lo)
        return i >= len(bounds) or bounds[i] >= hi

    def before(self, m: Match, kinds: Iterable[CueKind], weak: bool) -> list[Match]:
        """Cues of `kinds` before `m` in its clause, nearest first."""
        ks = tuple(kinds)
        return [
            c
            for c in reversed(self.matches)
            if c.end <= m.start and c.cue(*ks) and self.same(c.end, m.start, weak)
        ]

    def after(self, m: Match, kinds: Iterable[CueKind], weak: bool) -> list[Match]:
        ks = tuple(kinds)
        return [
            c
            for c in self.matches
            if c.start >= m.end and c.cue(*ks) and self.same(m.end, c.start, weak)
        ]

    def label_cue(self, *kinds: CueKind) -> bool:
        return any(c.cue(*kinds) for c in self.label)


@dataclass
class _State:
    norm: str
    text: str
    words: list[Word]
    spec: ScenarioFile
    lexicon: Lexicon
    cues: Cues
    quotes: list[tuple[int, int]]
    sentences: list[_Sentence]
    marks: list[Mark] = field(default_factory=list)


def _terminators(norm: str, s: Sentence, matches: list[Match]) -> tuple[list[int], list[int]]:
    strong = [m.start for m in matches if m.cue("term_strong")]
    strong += [s.start + p.start() for p in _STRONG_PUNCTUATION.finditer(norm[s.start : s.end])]
    weak = [m.start for m in matches if m.cue("term_weak")]
    weak += [s.start + p.start() for p in _WEAK_PUNCTUATION.finditer(norm[s.start : s.end])]
    return sorted(strong), sorted(strong + weak)


def _prepare(text: str, spec: ScenarioFile) -> _State:
    norm = normalise(text)
    found = words(norm)
    lex = lexicon(spec)
    matches = _under_pressure(norm, found, lex.match(text, norm, found))
    parts = sentences(text, norm)
    prepared = []
    for index, s in enumerate(parts):
        label = s.label
        inside = [m for m in matches if s.start <= m.start < s.end]
        labelled = []
        if label is not None:
            labelled = [m for m in matches if label[0] <= m.start and m.end <= label[1]]
            if not s.start <= label[0] < s.end:  # a label over this sentence, not in it
                inside = [m for m in inside if not (label[0] <= m.start and m.end <= label[1])]
        strong, weak = _terminators(norm, s, inside)
        prepared.append(_Sentence(s, inside, labelled, strong, weak, index))
    return _State(norm, text, found, spec, lex, cues(), quotes(norm), prepared)


_CONDITION_REACH = 12
"""How many words of an "if" clause are searched for a deadline or pressure."""


def _under_pressure(norm: str, found: list[Word], matches: list[Match]) -> list[Match]:
    """`matches` with each condition whose clause (to the next comma or terminator) holds a
    word of deadline or pressure ("if the letter has to go today") made a condition on the
    user's circumstances."""
    pressure = cues().pressure
    out = []
    for m in matches:
        if m.cue("cond_evidence") and not m.cue("missing"):
            clause: list[str] = []
            for w in found[m.last + 1 : m.last + 1 + _CONDITION_REACH]:
                if re.search(r"[,;:.!?]", norm[found[m.last].end : w.start]):
                    break
                clause.append(w.text)
            if any(
                tuple(clause[k : k + len(p)]) == p for p in pressure for k in range(len(clause))
            ):
                m = Match(m.start, m.end, m.first, m.last, (Tag("cue", "cond_user"),), m.one_word)
        out.append(m)
    return out


def _words_of(state: _State, m: Match) -> Words:
    return tuple(w.text for w in state.words[m.first : m.last + 1])


def _tail_is(tokens: list[str], phrases: Iterable[Words]) -> int:
    """The length of the longest phrase of `phrases` that `tokens` ends with (0: none)."""
    best = 0
    for phrase in phrases:
        n = len(phrase)
        if n > best and n <= len(tokens) and tuple(tokens[-n:]) == phrase:
            best = n
    return best


def _framed(state: _State, s: _Sentence, m: Match) -> bool:
    """Whether words right before `m` (skipping adverbs) frame it as a stated value ("it is
    critical", "treat it as high") and the clause does not make a requirement or scope its
    subject ("the forensic analysis is critical")."""
    first = next(i for i, w in enumerate(state.words) if w.start >= s.sentence.start)
    tokens = [w.text for w in state.words[first : m.first]]
    while True:
        n = _tail_is(tokens, state.cues.skip)
        if not n:
            break
        tokens = tokens[:-n]
    frame = _tail_is(tokens, state.cues.frames)
    if not frame:
        return False
    head = tokens[: len(tokens) - frame]
    while _tail_is(head, state.cues.skip):
        head = head[: len(head) - _tail_is(head, state.cues.skip)]
    if _tail_is(head, state.cues.not_subjects):
        return False
    subject = [
        c
        for c in s.matches
        if c.end <= m.start
        and s.same(c.end, m.start, True)
        and c.has("requirement")
        and m.first - c.last <= _SUBJECT_REACH
    ]
    return not subject


def _anchored(state: _State, s: _Sentence, m: Match, tag: Tag) -> bool:
    """Whether a value too common to stand alone stands as a value: its field named in the
    clause or the label, advice before it, a frame, or, for a topic, words after it that call it
    a problem."""
    named = any(
        t.kind == "field" and t.field == "" and t.id == tag.field
        for c in s.matches
        if s.same(c.start, m.start, False) and c is not m
        for t in c.tags
    ) or any(t.kind == "field" and t.id == tag.field for c in s.label for t in c.tags)
    if named:
        return True
    if s.before(m, ["advice"], weak=True) or s.label_cue("advice"):
        return True
    if m.topic and _problem_after(state, s, m):
        return True
    return _framed(state, s, m) or _alone(state, s, m)


_PROBLEM_REACH = 5


def _problem_after(state: _State, s: _Sentence, m: Match) -> bool:
    """Whether words that call it a problem follow a topic in its clause ("the data transfer is
    the issue", "working capital is tight")."""
    tokens = [
        w.text
        for w in state.words[m.last + 1 : m.last + 1 + _PROBLEM_REACH]
        if w.start < s.sentence.end and s.same(m.end, w.start, True)
    ]
    return any(
        tuple(tokens[k : k + len(p)]) == p for p in state.cues.problems for k in range(len(tokens))
    )


def _alone(state: _State, s: _Sentence, m: Match) -> bool:
    """Whether a one-word value stands alone as a call: the whole sentence ("Proceed."), or the
    sentence's first word, or all that follows a colon ("Not low, not high: elevated.")."""
    first = _first_word(state, s.sentence.start)
    tokens = [w.text for w in state.words[first : m.first]]
    while n := _tail_is(tokens, state.cues.skip):
        tokens = tokens[:-n]
    start = state.words[first + len(tokens)].start if first + len(tokens) < m.first else m.start
    before = state.norm[s.sentence.start : start].strip(" \t\"'")
    after = state.norm[m.end : s.sentence.end].strip(" \t\"')")
    if not before:
        return not after or after[:1] in ".!:;,"
    return before.endswith(":") and (not after or after[:1] in ".!;,")


def _weak(state: _State, m: Match, tag: Tag) -> bool:
    """Whether a value phrase is too common to stand alone: one of the family's topics, or one
    word, an ordinal field's or one the cue file lists as common."""
    if m.topic:
        return True
    if not m.one_word:
        return False
    ordinal = state.spec.answer[tag.field].kind == "ordinal"
    return ordinal or _words_of(state, m)[0].removesuffix("'s") in state.cues.common


def _source_before(state: _State, s: _Sentence, m: Match) -> Match | Word | None:
    """A report before `m` in its clause: "according to ..." or a source and a reporting verb
    ("the coordinator's note rates it"), with no word of the message's own inference between
    ("so", "therefore")."""
    for c in s.before(m, ["attr_before"], weak=False):
        if not _inference_between(state, s, c.end, m.start):
            return c
    first = next(i for i, w in enumerate(state.words) if w.start >= s.sentence.start)
    for j in range(m.first - 1, first - 1, -1):
        w = state.words[j]
        if not s.same(w.start, m.start, False) or _inference_between(state, s, w.end, m.start):
            break
        if w.text in _SPEAKER:
            return None
        if w.text in state.cues.report_nouns and j > first and _possessive(state, j - 1):
            return w
        n = _tail_is([x.text for x in state.words[first : j + 1]], state.cues.verbs)
        if n and _has_source(state, s, first, j - n + 1):
            return w
        if (w.text,) in state.cues.plural_verbs and j > first and _plural_source(state, j - 1):
            return w
    return None


def _advice_reported(state: _State, s: _Sentence, m: Match) -> bool:
    """Whether the advice nearest before `m` is someone else's: a bare verb ("recommend") whose
    subject, the nearest before it, is a plural source, not the message ("the notes recommend
    signing", "the advisors flag a risk and recommend proceeding")."""
    near = s.before(m, ["advice"], weak=True)
    if not near or _words_of(state, near[0]) not in state.cues.plural_verbs:
        return False
    first = _first_word(state, s.sentence.start)
    for j in range(near[0].first - 1, first - 1, -1):
        w = state.words[j].text
        if w in _FIRST_PERSON or w in ("you", "i'll", "we'll", "let's"):
            return False
        if _plural_source(state, j):
            return True
    return False


def _plural_source(state: _State, j: int) -> bool:
    """Whether word j names who reports in the plural ("the advisors say", "the notes
    recommend", "they say")."""
    token = state.words[j].text
    return token == "they" or (token.endswith("s") and token[:-1] in state.cues.sources)


def _possessive(state: _State, j: int) -> bool:
    """Whether word j is a possessive of someone other than the message ("the panel's", "the
    advisors'")."""
    w = state.words[j]
    if w.text in _FIRST_PERSON or w.text in ("its", "their", "his", "her"):
        return w.text != "my" and w.text != "our" and w.text in ("their", "his", "her")
    return w.text.endswith("'s") or state.norm[w.end : w.end + 1] == "'"


def _inference_between(state: _State, s: _Sentence, a: int, b: int) -> bool:
    return any(a <= c.start < b and _words_of(state, c) in state.cues.ends for c in s.matches)


_SOURCE_REACH = 12
"""How many words before a reporting verb its subject may start ("the advisors' memo in the
deal room supports the price and recommends ...")."""


def _has_source(state: _State, s: _Sentence, first: int, verb: int) -> bool:
    """Whether the words before word index `verb` (within reach, in its clause) name who or
    what reports: a source noun, a requirement or scope, or a capitalised name, and not the
    message itself ("I noted", "my note")."""
    for j in range(verb - 1, max(first, verb - _SOURCE_REACH) - 1, -1):
        w = state.words[j]
        if not s.same(w.start, state.words[verb].start, False):
            return False
        token = w.text.removesuffix("'s")
        if token in _FIRST_PERSON or w.text in _FIRST_PERSON:
            return False
        if token not in state.cues.sources and token.endswith("s"):
            token = token[:-1]
        before = state.words[j - 1].text if j - 1 >= first else ""
        if before in ("my", "our"):
            return False
        if token in state.cues.sources:
            return True
        if any(
            c.first <= j <= c.last and (c.has("requirement") or c.has("scope")) for c in s.matches
        ):
            return True
        original = state.text[w.start : w.end]
        if original[:1].isupper() and j > first and original not in ("I", "I'd", "I'm", "I've"):
            return True
    return False


def _adopted(state: _State, s: _Sentence, m: Match) -> bool:
    """Whether the message makes a reported value its own: an adoption cue after it in the
    sentence, or at the start of the next one."""
    if any(c.start >= m.end and c.cue("adoption") for c in s.matches):
        return True
    if s.index + 1 < len(state.sentences):
        nxt = state.sentences[s.index + 1]
        head = [c for c in nxt.matches if c.cue("adoption")]
        if head:
            first = next(i for i, w in enumerate(state.words) if w.start >= nxt.sentence.start)
            states = any(c.has("value") for c in nxt.matches)
            return not states or head[0].first - first < _ADOPTION_REACH
    return False


def _quoted(state: _State, s: _Sentence, m: Match) -> bool:
    return s.sentence.quoted or any(a <= m.start < b for a, b in state.quotes)


def _negated(s: _Sentence, m: Match, *, after: bool = True, state: _State | None = None) -> bool:
    """A negation (or a refusal: "I can't say it is critical") before the mention in its
    clause, within reach, or (with `after`) one after it; with `state`, also a missing cue
    that holds a negation ("I wasn't able to check regulatory approvals")."""
    kinds: list[CueKind] = (
        ["neg_before", "refusal", "missing"] if state else ["neg_before", "refusal"]
    )
    near = [
        c
        for c in s.before(m, kinds, weak=True)
        if m.first - c.last <= _NEGATION_REACH
        and (state is None or c.cue("neg_before", "refusal") or _holds_negation(state, c))
        and not (state is not None and _PARTICLE.match(state.norm, c.end))
    ]
    return bool(near) or (after and _negated_after(s, m))


_PARTICLE = re.compile(r"[ \t]*[,:]")
"""A negation followed by a comma or a colon answers a question ("No, I wouldn't proceed"; "No:
..."): its reach ends there."""


def _holds_negation(state: _State, c: Match) -> bool:
    negations = state.cues.phrases["neg_before"]
    return any((w,) in negations for w in _words_of(state, c))


def _negated_after(s: _Sentence, m: Match) -> bool:
    return any(c.first - m.last <= _POST_REACH for c in s.after(m, ["neg_after"], weak=True))


def _conditional(s: _Sentence, m: Match) -> bool:
    """A condition on evidence in the clause, before or after the mention (or in its label)."""
    both = s.before(m, ["cond_evidence"], weak=False) + s.after(m, ["cond_evidence"], weak=False)
    return bool(both) or s.label_cue("cond_evidence")


def _stance(state: _State, s: _Sentence, m: Match) -> Literal["advice", "possibility", "modal", ""]:
    """The nearest of advice, a possibility or a hypothetical before the mention, in its
    clause (a possibility or a hypothetical also across an "and" joining a second verb)."""
    near = s.before(m, ["advice", "possibility", "modal"], weak=True)
    if not near:
        near = [
            c for c in s.before(m, ["possibility", "modal"], weak=False) if _shared(state, s, c, m)
        ]
    if not near:
        if s.label_cue("possibility"):
            return "possibility"
        return "advice" if s.label_cue("advice") else ""
    c = near[0]
    if c.cue("advice"):
        return "advice"
    return "possibility" if c.cue("possibility") else "modal"


_SUBJECTS = frozenset(
    {
        "the",
        "a",
        "an",
        "i",
        "we",
        "you",
        "it",
        "this",
        "that",
        "they",
        "he",
        "she",
        "there",
        "our",
        "your",
        "my",
        "its",
        "their",
        "his",
        "her",
        "these",
        "those",
        "i'd",
        "i'm",
        "it's",
    }
)


def _shared(state: _State, s: _Sentence, c: Match, m: Match) -> bool:
    """Whether a hedge `c` reaches `m` across the weak terminators between them: each an "and"
    or "or" that joins a second verb to the same subject ("would push this to critical and
    trigger a customer notice"), not a new clause ("..., and the regulator must be told")."""
    between = [t for t in s.matches if c.end <= t.start and t.end <= m.start and t.cue("term_weak")]
    starts = {t.start for t in between}
    if not between or any(c.end <= p < m.start and p not in starts for p in s.weak):
        return False
    for t in between:
        nxt = state.words[t.last + 1].text if t.last + 1 < len(state.words) else ""
        if _words_of(state, t) not in (("and",), ("or",)) or nxt in _SUBJECTS:
            return False
    return True


_REQUEST_REACH = 4
"""How many words after a mention a request for evidence may start ("asking the privacy office
to share their findings")."""
_AUXILIARIES = frozenset(
    {"is", "are", "was", "were", "has", "have", "had", "been", "will", "would", "'s", "also"}
)


def _acting(state: _State, s: _Sentence, m: Match) -> bool:
    """Whether `m` is the subject of a report or an activity ("the forensics team says", "the
    forensics team has found", "the forensics team is still working through the images"): the
    words after it are a reporting verb in -s, or, past auxiliaries and adverbs, a reporting
    verb or a verb in -ing."""
    k = m.last + 1
    if k >= len(state.words) or state.norm[m.end : state.words[k].start].strip():
        return False
    while k < len(state.words) and (
        state.words[k].text in _AUXILIARIES or (state.words[k].text,) in state.cues.skip
    ):
        k += 1
    if k >= len(state.words) or not s.sentence.start <= state.words[k].start < s.sentence.end:
        return False
    word = state.words[k].text
    if k == m.last + 1:  # "the team says"; "the briefing proposed earlier" is no report
        return (word,) in state.cues.verbs and word.endswith("s")
    return (word,) in state.cues.verbs or (word.endswith("ing") and len(word) > len("being"))


_QUALIFIED_REACH = 2
_QUALIFIED = "qualified by what follows it: another value of its field is meant"


def _qualified(state: _State, s: _Sentence, m: Match) -> bool:
    """Whether a value of an ordinal field, one word or one that another value of the field
    extends (`proceed`, `proceed_with_caution`), is qualified right after it ("sign, but only
    with a longer notice period", "go ahead, but carefully"): another value is meant, the
    reader does not say which."""
    weak = any(
        t.kind == "value"
        and state.spec.answer[t.field].kind == "ordinal"
        and (m.one_word or any(v.startswith(f"{t.id}_") for v in state.spec.answer[t.field].values))
        for t in m.tags
    )
    return weak and any(
        c.first - m.last <= _QUALIFIED_REACH for c in s.after(m, ["qualifier"], weak=False)
    )


_NOES = frozenset({"no", "not", "pending", "unclear", "undecided", "tbd", "n/a", "none"})
_ANSWERS = _NOES | {"yes"}


_DETERMINERS = frozenset(
    {"the", "a", "an", "its", "their", "his", "her", "our", "your", "this", "that", "these"}
)


def _object_of_reading(state: _State, s: _Sentence, m: Match) -> bool:
    """Whether `m` is what a cue of reading names ("based on the quality audit results", "I've
    read the override review"): only determiners between."""
    return any(
        all(w.text in _DETERMINERS for w in state.words[c.last + 1 : m.first])
        for c in s.before(m, ["present"], weak=True)
    )


def _modifies(state: _State, m: Match) -> bool:
    """Whether a value's phrase is followed right after by a noun it names the kind of ("the
    customer notice template", "the quality audit results")."""
    k = m.last + 1
    return (
        k < len(state.words)
        and not state.norm[m.end : state.words[k].start].strip()
        and state.words[k].text in state.cues.heads
    )


def _withdrawn(state: _State, s: _Sentence, m: Match) -> bool:
    """Whether the message withdraws a value right after giving it: a refusal that refers back
    to it ("it", "that") or names its field, after a strong terminator in its sentence ("The
    draft looks signable, but I'm not comfortable recommending that"), or opening the next
    sentence ("But I can't confirm it")."""
    fields = {t.field for t in m.tags if t.kind == "value"}
    later = [c for c in s.matches if c.start >= m.end and not s.same(m.end, c.start, False)]
    if s.index + 1 < len(state.sentences):
        nxt = state.sentences[s.index + 1]
        if nxt.matches and nxt.matches[0].cue("term_strong"):
            later += nxt.matches
    for c in later:
        if not c.cue("refusal"):
            continue
        scope = [w.text for w in state.words[c.last + 1 : c.last + 4]]
        ends = not state.norm[c.end : s.sentence.end].strip(" .!\t") and c.end <= s.sentence.end
        if (
            ends
            or _REFERRING & set(scope)
            or any(
                t.kind == "field" and t.id in fields
                for o in later
                for t in o.tags
                if o.start >= c.end
            )
        ):
            return True
    return False


def _in_label(state: _State, s: _Sentence, m: Match) -> bool:
    """Whether `m` is the whole of its sentence's own label and the rest answers it no
    ("Regulator notice: not yet"), or, one word, answers it at all ("**Award:** yes, with
    conditions"): a heading for what follows ("Exec bridge: yes" and "Bullying: three
    witnesses describe ..." state their label)."""
    label = s.sentence.label
    if label is None or (m.start, m.end) != label:
        return False
    rest = [w.text for w in state.words[m.last + 1 :] if w.start < s.sentence.end]
    return bool(rest) and (rest[0] in _NOES or (m.one_word and rest[0] in _ANSWERS))


def _user_words(s: _Sentence, m: Match) -> bool:
    """Whether the user's own words or wishes, acknowledged, come before `m` in its clause
    ("I know you need to sign today")."""
    return bool(s.before(m, ["user_words"], weak=True))


_PROGRESS_START = 2
"""How many words may come before a cue of work in progress at the start of its sentence
("Now, checking ...", "OK, next I'll ...")."""


def _in_progress(state: _State, s: _Sentence, m: Match) -> bool:
    """Whether `m` stands in a note of work in progress: a progress cue at the start of its
    sentence, before it in its clause ("Checking the clause library for ...")."""
    first = _first_word(state, s.sentence.start)
    return any(c.first - first <= _PROGRESS_START for c in s.before(m, ["progress"], weak=False))


def _user_condition(s: _Sentence, m: Match) -> bool:
    return any(c.cue("cond_user") and c.end <= m.start for c in s.matches)


def _value_status(
    state: _State, s: _Sentence, m: Match, *, negation: bool = True
) -> tuple[bool, str, bool]:
    """Whether a value mention is asserted, why not if not, and whether it is advice (without
    `negation`, a negation after it is part of what it says: "escalations are not needed")."""
    if _quoted(state, s, m):
        return False, "quoted", False
    if state.words[m.last].text.endswith("'s") or state.norm[m.end : m.end + 1] == "'":
        return False, "a possessive: it names whose record, not a value", False
    if s.sentence.question:
        return False, "a question", False
    if _negated(s, m, after=negation, state=state):
        return False, "negated", False
    if _in_label(state, s, m):
        return False, "a label, not a statement", False
    if any(c.cue("complete") and c.first <= m.first and m.last <= c.last for c in s.matches):
        return False, "part of a claim of completeness", False
    if _object_of_reading(state, s, m):
        return False, "a record read, not a value", False
    if _modifies(state, m):
        return False, "names a kind of record, not a value", False
    if _withdrawn(state, s, m):
        return False, "withdrawn after it", False
    if any(c.first - m.last <= _POST_REACH for c in s.after(m, ["done"], weak=True)):
        return False, "reported as done, not advised", False
    if _user_words(s, m):
        return False, "the user's words, acknowledged", False
    if _acting(state, s, m):
        return False, "an actor or a source, not a value", False
    if s.after(m, ["request"], weak=True) and any(
        c.first - m.last <= _REQUEST_REACH for c in s.after(m, ["request"], weak=True)
    ):
        return False, "asked for evidence, not a value", False
    if any(c.first - m.last <= _POST_REACH for c in s.after(m, ["possibility_after"], weak=True)):
        return False, "a possibility, not a claim", False
    if _qualified(state, s, m):
        return False, _QUALIFIED, False
    if _in_progress(state, s, m):
        return False, "a topic of work in progress", False
    if _conditional(s, m):
        return False, "conditional on evidence", False
    stance = _stance(state, s, m)
    if stance == "advice" and _advice_reported(state, s, m):
        stance = ""
    if stance != "advice" and _source_before(state, s, m) is not None and not _adopted(state, s, m):
        return False, "attributed to a document or person", False
    if stance == "possibility":
        return False, "a possibility, not a claim", False
    if stance == "modal" and not _user_condition(s, m):
        return False, "hypothetical", False
    return True, "", stance == "advice"


_SCOPED = frozenset(
    {"on", "about", "regarding", "around", "concerning", "beyond", "besides", "except", "other"}
)
"""Words after a set field's name that limit a statement of none to part of it ("no issues on
governing law"): the set is not said to be empty."""
_SEARCHED = 3
"""How many words before a scope a cue that it was searched ("anywhere in") reaches."""
_EMPTY_REACH = 3
"""How many words after a set field's name a negation may start to state it empty
("escalations are not needed")."""


def _set_field(state: _State, m: Match) -> str | None:
    """The set field `m` names, if it names one."""
    for t in m.tags:
        if t.kind == "field" and state.spec.answer[t.id].kind == "set":
            return t.id
    return None


def _first_word(state: _State, offset: int) -> int:
    return next((i for i, w in enumerate(state.words) if w.start >= offset), len(state.words))


def _span(state: _State, first: int, last: int) -> Match:
    return Match(state.words[first].start, state.words[last].end, first, last, (), False)


def _empty_sets(state: _State, s: _Sentence) -> Iterator[tuple[str, Match, Match]]:
    """The set fields a sentence states empty, each with the words that say so and the
    mention of the field: a label naming it whose rest says none ("Escalations: none"), its
    name right after a word of none ("no escalations are needed", "there are no material
    flags") or right before a negation ("escalations are not needed"); asserted as a value is
    (not quoted, asked, negated, conditional, reported or a mere possibility)."""
    end = _first_word(state, s.sentence.end)
    label = s.sentence.label
    if label is not None:
        named = [(f, c) for c in s.label if (f := _set_field(state, c)) is not None]
        first = _first_word(state, max(s.sentence.start, label[1]))
        rest = [w.text for w in state.words[first:end]]
        n = max((len(p) for p in state.cues.empty_rest if tuple(rest[: len(p)]) == p), default=0)
        if named and n:
            said = _span(state, first, first + n - 1)
            if _value_status(state, s, said)[0]:
                for f, c in named:
                    yield f, said, c
    start = _first_word(state, s.sentence.start)
    for m in s.matches:
        f = _set_field(state, m)
        if f is None or m in s.label:
            continue
        tokens = [w.text for w in state.words[start : m.first]]
        while n := _tail_is(tokens, state.cues.empty_skip):
            tokens = tokens[:-n]
        n = _tail_is(tokens, state.cues.empty_before)
        nxt = state.words[m.last + 1].text if m.last + 1 < len(state.words) else ""
        if n and nxt not in _SCOPED:
            said = _span(state, start + len(tokens) - n, m.last)
            if _value_status(state, s, said)[0]:
                yield f, said, m
        elif (
            any(c.first - m.last <= _EMPTY_REACH for c in s.after(m, ["neg_after"], weak=True))
            and _value_status(state, s, m, negation=False)[0]
        ):
            yield f, m, m


def _is_gap(state: _State, s: _Sentence, m: Match) -> bool:
    """Whether a requirement or scope mention is named as missing: a missing cue in its clause
    or label (not itself negated), a scope whose own phrase says it is restricted, and no
    condition on evidence (a mention that reports, "the summary says", is a source)."""
    if m.last + 1 < len(state.words):
        nxt = state.words[m.last + 1]
        if (nxt.text,) in state.cues.verbs and not state.norm[m.end : nxt.start].strip():
            return False
    cues_here = [
        c
        for c in s.matches
        if c is not m and c.cue("missing", "incomplete") and s.same(c.start, m.start, False)
    ]
    live = [
        c
        for c in cues_here
        if not [
            n
            for n in s.before(c, ["neg_before"], weak=True)
            if c.first - n.last <= _CUE_NEGATION_REACH and not n.cue("missing")
        ]
    ]
    if [c for c in s.before(m, ["present"], weak=True) if m.first - c.last <= _PRESENT_REACH]:
        return False
    if s.after(m, ["present"], weak=True) or _in_progress(state, s, m):
        return False
    negations = s.before(m, ["neg_before"], weak=True)
    for c in s.before(m, ["limited"], weak=False):
        if not any(c.end <= n.start for n in negations):
            return False
    searched = [c for c in s.before(m, ["searched"], weak=True) if m.first - c.last <= _SEARCHED]
    if searched and not m.has("requirement"):
        return False
    if _finding(state, s, live):
        return False
    own = m.has("scope") and bool(_GAP_WORDS & set(_words_of(state, m)))
    if not (live or own or s.label_cue("missing", "incomplete")):
        return False
    conditions = [c for c in s.before(m, ["cond_evidence"], weak=True) if not c.cue("missing")]
    return not conditions


def _finding(state: _State, s: _Sentence, cues_here: list[Match]) -> bool:
    """Whether a sentence under a set field's label ("Control gaps: override approvals are
    missing") reports a finding, not what the message could not see: no missing cue in the
    label, none in the message's own voice ("I can't see", "outside my view")."""
    if not any(_set_field(state, c) for c in s.label) or s.label_cue("missing", "incomplete"):
        return False
    return not any(set(_words_of(state, c)) & _OWN_VOICE for c in cues_here)


_OWN_VOICE = frozenset({"i", "me", "my", "i'm", "i've", "i'd", "we", "us", "our", "i'll"})


def _claims(state: _State, s: _Sentence) -> Iterator[tuple[Match, Completeness]]:
    """The claims of completeness in a sentence (a question or a condition claims nothing; a
    negated claim of completeness is one of incompleteness; a claim limited to what the message
    could see claims nothing)."""
    if s.sentence.question:
        return
    for c in s.matches:
        if _conditional(s, c) or _quoted(state, s, c) or _in_progress(state, s, c):
            continue
        if c.cue("incomplete", "missing") and _denied(state, s, c):
            yield c, "complete"
        elif c.cue("incomplete", "limited"):
            if not _negated(s, c):
                yield c, "incomplete"
        elif c.cue("complete"):
            if _limited(state, c) or any(
                o is not c and o.first <= c.last and c.first <= o.last and o.cue(*_NOT_COMPLETE)
                for o in s.matches
            ):
                continue
            if _negated(s, c):
                yield c, "incomplete"
            elif _stance(state, s, c) == "possibility" or _source_before(state, s, c) is not None:
                continue
            else:
                yield c, "complete"
        elif c.cue("missing") and not _negated(s, c):
            if [p for p in s.before(c, ["present"], weak=True) if c.first - p.last <= 6]:
                continue
            named = any(
                (o.has("requirement") or o.has("scope"))
                and s.same(o.start, c.start, False)
                and _is_gap(state, s, o)
                for o in s.matches
                if o is not c
            )
            nouns = any(
                w.text in state.cues.evidence_nouns and s.same(w.start, c.start, False)
                for w in state.words[c.last - 6 if c.last >= 6 else 0 : c.last + 7]
                if s.sentence.start <= w.start < s.sentence.end
            )
            if named or (nouns and _words_of(state, c) not in state.cues.loose):
                yield c, "incomplete"


_NOT_COMPLETE: tuple[CueKind, ...] = ("incomplete", "missing", "neg_before")
"""Cues that, over the same words, unmake a claim of completeness ("haven't seen all the
records": "all the records" is matched in a pass of its own)."""


def _limited(state: _State, c: Match) -> bool:
    """Whether a claim of completeness is limited to what the message could see ("all the
    records I can see"): a qualifier within reach after it, with no verb between ("all
    required records were available to me" is a full claim)."""
    nxt = [w.text for w in state.words[c.last + 1 : c.last + 5 + _QUALIFIER_REACH]]
    for k in range(_QUALIFIER_REACH + 1):
        if any(tuple(nxt[k : k + len(q)]) == q for q in state.cues.qualified):
            return not any(w in _COPULAS for w in nxt[:k])
    return False


_COPULAS = frozenset({"is", "are", "was", "were", "been", "be", "being"})


def _denied(state: _State, s: _Sentence, c: Match) -> bool:
    """Whether a claim of incompleteness or a missing cue is denied by a word of none before it
    in its clause ("nothing the runbook requires is outside my view"): a claim of
    completeness."""
    first = _first_word(state, s.sentence.start)
    for n in s.before(c, ["neg_before"], weak=True):
        if c.first - n.last > _CUE_NEGATION_REACH or n.first < first:
            continue
        if _words_of(state, n) in state.cues.none:
            return not s.before(n, ["neg_before", "refusal", "possibility"], weak=True)
    return False


def _refusals(state: _State, s: _Sentence) -> Iterator[Match]:
    if s.sentence.question:
        return
    for c in s.matches:
        if c.cue("refusal") and not _quoted(state, s, c) and not _conditional(s, c):
            yield c


def _mark(
    state: _State, m: Match | tuple[int, int], kind: MarkKind, label: str, note: str = ""
) -> None:
    start, end = (m.start, m.end) if isinstance(m, Match) else m
    state.marks.append(Mark(start, end, kind, label, note))


def read_prose(text: str, spec: ScenarioFile, *, task: Task | None = None) -> ProseReading:
    """What `text`, a message in prose, decides, read against the family `spec` (with `task`,
    names are resolved among its contract's requirements first); see the module docstring."""
    state = _prepare(text, spec)
    asserted: dict[str, list[tuple[str, bool, Match]]] = {}
    set_aside: list[tuple[Match, Tag, str]] = []
    gaps: dict[str, Match] = {}
    affected: dict[str, Match] = {}
    claims: list[tuple[Match, Completeness]] = []
    refusals: list[tuple[Match, _Sentence]] = []
    empty: dict[str, Match] = {}
    for s in state.sentences:
        said_empty = set()
        for f, said, mention in _empty_sets(state, s):
            empty.setdefault(f, said)
            said_empty.add((mention.start, mention.end))
        for m in s.matches:
            named_missing = (m.has("requirement") or m.has("scope")) and _is_gap(state, s, m)
            if named_missing:
                for t in m.tags:
                    if t.kind in ("requirement", "scope"):
                        gaps.setdefault(t.id, m)
            values = [t for t in m.tags if t.kind == "value"]
            if not values or named_missing:
                continue
            for tag in values:
                if _weak(state, m, tag) and not _anchored(state, s, m, tag):
                    continue
                ok, why, advice = _value_status(state, s, m)
                if ok:
                    asserted.setdefault(tag.field, []).append((tag.id, advice, m))
                else:
                    set_aside.append((m, tag, why))
                    if why in (
                        "conditional on evidence",
                        "a possibility, not a claim",
                        "hypothetical",
                    ):
                        affected.setdefault(tag.field, m)
        _referred_gaps(state, s, gaps)
        _near_gaps(state, s, gaps, task)
        claims.extend(_claims(state, s))
        for r in _refusals(state, s):
            refusals.append((r, s))
        withheld = _withholds(state, s, said_empty)
        if withheld is not None and not s.sentence.question:
            refusals.append((withheld, s))
        _affected_fields(state, s, affected, said_empty)
    answer = _answer(state, asserted, set_aside, empty)
    completeness = _completeness(claims, bool(gaps))
    unread = _unread_answers(state) or any(why == _QUALIFIED for _, _, why in set_aside)
    blocks = bool(refusals) or ((completeness == "incomplete" or bool(gaps)) and not unread)
    final: AnswerRead | None = answer if (answer or not blocks) else None
    for r, _ in refusals:
        _mark(state, r, "block", "block")
    for m, c in claims:
        if completeness == c:
            _mark(state, m, "completeness", c)
    ordered_gaps = _order_gaps(spec, gaps)
    for gid in ordered_gaps:
        _mark(state, gaps[gid], "gap", gid)
    fields = [f for f in spec.answer if f in affected]
    for f in fields:
        _mark(state, affected[f], "affected", f)
    marks = tuple(
        sorted(state.marks, key=lambda k: (k.start, k.end, MARK_KINDS.index(k.kind), k.label))
    )
    return ProseReading(
        answer=final,
        completeness=completeness,
        gaps=ordered_gaps,
        affected=tuple(fields),
        marks=marks,
    )


_FUZZY_CUTOFF = 88.0
"""How close (rapidfuzz's partial ratio, 0-100) a passage must come to a requirement's
description to name it ("the review of which data categories were exposed")."""
_FUZZY_WORDS = 4
"""Only descriptions of at least this many words are matched approximately."""


def _near_gaps(state: _State, s: _Sentence, gaps: dict[str, Match], task: Task | None) -> None:
    """Requirements named by a near match of their description in a sentence that says
    something is missing (rapidfuzz), among the task's contract when a task is given, else the
    family's: the phrasings people use that no family file lists."""
    cues_here = [c for c in s.matches if c.cue("missing", "incomplete")]
    if not cues_here and not s.label_cue("missing", "incomplete"):
        return
    named = {t.id for m in s.matches for t in m.tags if t.kind == "requirement"}
    ids = (
        [r.id for r in task.contract.required_evidence]
        if task is not None
        else [e.id for e in state.spec.evidence_families]
    )
    text = state.norm[s.sentence.start : s.sentence.end]
    for rid in ids:
        if rid in named or rid in gaps:
            continue
        words = phrase_words(state.spec.evidence_family(rid).description)
        if len(words) < _FUZZY_WORDS:
            continue
        found = fuzz.partial_ratio_alignment(" ".join(words), text, score_cutoff=_FUZZY_CUTOFF)
        if found is None:
            continue
        start, end = s.sentence.start + found.dest_start, s.sentence.start + found.dest_end
        first = next(i for i, w in enumerate(state.words) if w.end > start)
        last = max(first, max(i for i, w in enumerate(state.words) if w.start < end))
        near = Match(start, end, first, last, (Tag("requirement", rid),), False)
        if _is_gap(state, s, near):
            gaps.setdefault(rid, near)


_PRONOUN_AFTER = 2
"""How near after a missing cue a pronoun must stand to be its object ("I can't open it")."""
_INDEFINITE = frozenset({"anything", "nothing", "something", "everything", "one", "here"})
"""Words before a relative "that" or "which" that names nothing ("I don't see anything here that
warrants ...")."""
_REFERRING = frozenset({"it", "that", "this", "those", "these", "them", "which", "itself"})


def _referred_gaps(state: _State, s: _Sentence, gaps: dict[str, Match]) -> None:
    """A clause that names something missing by a pronoun ("I can't open it", "that review
    isn't visible to me") and names no requirement itself: the requirement named last before
    it, in this sentence or the one before, is the gap."""
    for c in s.matches:
        if not c.cue("missing", "incomplete") or _negated(s, c):
            continue
        if _words_of(state, c) in state.cues.loose:
            continue
        if any(
            o.has("requirement") and s.same(o.start, c.start, False)
            for o in s.matches
            if o is not c
        ):
            continue
        first = _first_word(state, s.sentence.start)
        subject = [
            j
            for j in range(first, c.first)
            if state.words[j].text in _REFERRING
            and s.same(state.words[j].start, c.start, False)
            and (j == first or state.words[j - 1].text not in _INDEFINITE)
        ]
        objects = [
            w
            for w in state.words[c.last + 1 : c.last + 1 + _PRONOUN_AFTER]
            if w.text in _REFERRING and w.start < s.sentence.end
        ]
        if not (subject or objects):
            continue
        earlier = [
            o
            for o in s.matches
            if o.end <= c.start and o.has("requirement") and not s.same(o.start, c.start, False)
        ]
        if not earlier and s.index > 0:
            before = state.sentences[s.index - 1]
            earlier = [o for o in before.matches if o.has("requirement")]
        if earlier:
            last = earlier[-1]
            for t in last.tags:
                if t.kind == "requirement":
                    gaps.setdefault(t.id, last)


_UNSURE: tuple[CueKind, ...] = (
    "refusal",
    "neg_before",
    "possibility",
    "modal",
    "cond_evidence",
    "missing",
    "incomplete",
    "neg_after",
)


def _unread_answers(state: _State) -> bool:
    """Whether the message seems to state a value the reader could not read, in a clause with
    no refusal, negation, hedge, condition or missing cue and no value read: an answer field
    named ("severity sits at the top of the scale"), advice that names no record ("I'd
    recommend a change of line manager"), or a sentence that opens with the first word of a
    value's phrase, as a call does ("Reset the compromised admin credentials"); or a sentence
    that is a claim of its own (`_says_more`). Such a message is not taken as
    a block, but for a refusal."""
    if _says_more(state):
        return True
    openers = state.lexicon.openers
    for s in state.sentences:
        if s.sentence.question or s.label_cue(*_UNSURE):
            continue
        for m in s.matches:
            if not (m.has("field") or m.cue("advice")) or _unsure(s, m):
                continue
            if (
                m.cue("advice")
                and not m.has("field")
                and (
                    _advice_reported(state, s, m)
                    or not set(_words_of(state, m)) & _CALLS
                    or any(
                        c.has("requirement") or c.has("scope") or c.cue("request")
                        for c in s.matches
                        if s.same(c.start, m.start, False)
                    )
                )
            ):
                continue
            return True
        first = _first_word(state, s.sentence.start)
        if (
            first < len(state.words)
            and state.words[first].start < s.sentence.end
            and state.words[first].text in openers
            and not s.matches
        ):
            return True
    return False


_CLAIM_WORDS = 3
"""A sentence shorter than this many words ("Short answer:") is no claim of its own."""
_ABOUT_EVIDENCE: tuple[CueKind, ...] = (
    "missing",
    "incomplete",
    "limited",
    "refusal",
    "present",
    "progress",
    "searched",
    "request",
    "complete",
    "user_words",
    "attr_before",
    "cond_evidence",
)


def _says_more(state: _State) -> bool:
    """Whether some sentence of the message (not a question, not quoted) is a claim of its own
    about the case: it says nothing of evidence (no cue that something is missing, read,
    searched, asked for or being read, no claim of completeness, no condition on evidence, no
    refusal, report or the user's words, in it or its label, no record or scope named, no
    reporting verb), withholds no field, and opens with no words that acknowledge, thank or
    introduce ("I understand the pressure", "Here's my read"). A message that says "This
    warrants a disciplinary process." and what it could not see gives an answer in words no
    family lists, and does not withhold one."""
    for s in state.sentences:
        if s.sentence.question or s.sentence.quoted or _withholds(state, s) is not None:
            continue
        first = _first_word(state, s.sentence.start)
        tokens = [w.text for w in state.words[first:] if w.start < s.sentence.end]
        if len(tokens) < _CLAIM_WORDS:
            continue
        if any(tuple(tokens[: len(p)]) == p for p in state.cues.openings):
            continue
        if any((w,) in state.cues.verbs or (w,) in state.cues.plural_verbs for w in tokens):
            continue
        if any(
            state.words[j].text in state.cues.report_nouns and _possessive(state, j - 1)
            for j in range(first + 1, min(first + _CLAIM_WORDS + 2, len(state.words)))
        ):
            continue  # "The advisors' memo proceeds on the basis that ..." reports
        if s.label_cue(*_ABOUT_EVIDENCE) or any(
            m.cue(*_ABOUT_EVIDENCE) or m.has("requirement") or m.has("scope") for m in s.matches
        ):
            continue
        return True
    return False


def _withholds(
    state: _State, s: _Sentence, said_empty: Collection[tuple[int, int]] = ()
) -> Match | None:
    """A negation or refusal before an answer field's name in its clause, or under a field's
    label ("I can't assign a risk level yet", "Severity: unable to determine"): the message
    withholds that field ("no escalations are needed" says the set is empty, `said_empty`)."""
    labelled = any(c.has("field") for c in s.label)
    for c in s.matches:
        if not c.cue("neg_before", "refusal") or _quoted(state, s, c):
            continue
        quantifier = _words_of(state, c) in state.cues.none
        if labelled or any(
            m.has("field")
            and m.start >= c.end
            and s.same(m.start, c.start, False)
            and (m.start, m.end) not in said_empty
            and not (quantifier and _set_field(state, m))  # "no escalations ...": how many
            for m in s.matches
        ):
            return c
    return None


_CALLS = frozenset(
    {
        "recommend",
        "recommendation",
        "advise",
        "advice",
        "suggest",
        "should",
        "call",
        "rate",
        "treat",
        "classify",
        "lean",
        "go",
        "put",
        "settle",
        "land",
        "default",
        "err",
    }
)
"""Words of advice that make a call ("I'd recommend", "treat it as", "go with"), not a wish
("I'd like to give you a clean answer", "I'd treat any recommendation as premature")."""


def _unsure(s: _Sentence, m: Match) -> bool:
    """Whether `m`'s clause holds a cue of refusal, negation, hedge, condition or of something
    missing, or a value read."""
    return any(
        c is not m
        and s.same(c.start, m.start, False)
        and (c.cue(*_UNSURE) or c.has("value") or c.has("requirement"))
        for c in s.matches
    )


def _affected_fields(
    state: _State, s: _Sentence, affected: dict[str, Match], said_empty: set[tuple[int, int]]
) -> None:
    """Fields named in a clause that refuses, negates, hedges, conditions or names something
    missing: fields the message says it cannot state or that what is missing bears on (not a
    set field where it is stated empty, `said_empty`)."""
    kinds: tuple[CueKind, ...] = (
        "refusal",
        "neg_before",
        "possibility",
        "cond_evidence",
        "missing",
    )
    for m in s.matches:
        if (m.start, m.end) in said_empty:
            continue
        for t in m.tags:
            if t.kind != "field":
                continue
            if any(
                c is not m and c.cue(*kinds) and s.same(c.start, m.start, False) for c in s.matches
            ):
                affected.setdefault(t.id, m)


def _answer(
    state: _State,
    asserted: dict[str, list[tuple[str, bool, Match]]],
    set_aside: list[tuple[Match, Tag, str]],
    empty: dict[str, Match],
) -> AnswerRead:
    """The values asserted, per field in family order; an ordinal field stated with two values
    keeps the one given as advice, else neither (the reader does not guess); a set field stated
    empty (`empty`) and given no value is `[]`."""
    out: AnswerRead = {}
    for name, fspec in state.spec.answer.items():
        found = asserted.get(name)
        if not found:
            if name in empty:
                out[name] = []
                _mark(state, empty[name], "value", f"{name}=[]")
            continue
        if fspec.kind == "set":
            chosen = {v for v, _, _ in found}
            out[name] = [v for v in fspec.values if v in chosen]
            for v, _, m in found:
                _mark(state, m, "value", f"{name}={v}")
            continue
        distinct = {v for v, _, _ in found}
        if len(distinct) > 1:
            advised = {v for v, advice, _ in found if advice}
            distinct = advised if len(advised) == 1 else set()
        if len(distinct) != 1:
            for v, _, m in found:
                _mark(state, m, "set_aside", f"{name}={v}", "conflicting values for one field")
            continue
        (value,) = distinct
        out[name] = value
        for v, _, m in found:
            if v == value:
                _mark(state, m, "value", f"{name}={v}")
            else:
                _mark(state, m, "set_aside", f"{name}={v}", "another value is given as advice")
    for m, tag, why in set_aside:
        _mark(state, m, "set_aside", f"{tag.field}={tag.id}", why)
    return out


def _completeness(claims: list[tuple[Match, Completeness]], gaps: bool) -> Completeness | None:
    """Incomplete when it claims so or names a gap; complete when it claims only that."""
    said = {c for _, c in claims}
    if "incomplete" in said or gaps:
        return "incomplete"
    return "complete" if "complete" in said else None


def _order_gaps(spec: ScenarioFile, gaps: dict[str, Match]) -> tuple[str, ...]:
    requirements = [e.id for e in spec.evidence_families if e.id in gaps]
    scopes = [s for s in spec.scopes if s in gaps]
    return (*requirements, *scopes)
