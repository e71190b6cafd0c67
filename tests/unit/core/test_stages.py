"""Stage roles: an annotator declares the keys it writes; an evaluator decides without writing and
the runner writes what it measured; corpus stages declare prepared comparison instead of being probed."""

from thresher.core.document import Document, Drop
from thresher.core.stages import (
    Annotator,
    Evaluation,
    PreparedComparison,
    apply_stage,
    comparison_of,
    undeclared_annotations,
)
from thresher.dedup.exact import ExactDedup
from thresher.dedup.near import MinHashDedup
from thresher.quality.gopher import GopherQuality


class LengthAnnotator:
    name = "test.length"
    annotates = ("test.chars",)

    def annotate(self, doc):
        doc.annotations["test.chars"] = len(doc.text)


class SloppyAnnotator(LengthAnnotator):
    def annotate(self, doc):
        super().annotate(doc)
        doc.annotations["quality.word_count"] = 0  # not its key


def test_an_annotator_declares_its_keys_and_the_contract_check_names_undeclared_ones():
    assert isinstance(LengthAnnotator(), Annotator)
    doc = Document(id="a", text="four")
    assert apply_stage(LengthAnnotator(), doc) == [] and doc.annotations == {"test.chars": 4}
    assert undeclared_annotations(LengthAnnotator(), Document(id="b", text="x")) == []
    assert undeclared_annotations(SloppyAnnotator(), Document(id="c", text="x")) == ["quality.word_count"]


def test_a_quality_rule_set_decides_without_writing_and_the_runner_writes_what_it_measured():
    rules = GopherQuality()
    doc = Document(id="a", text="two words")
    evaluation = rules.evaluate(doc)
    assert isinstance(evaluation, Evaluation) and doc.annotations == {}  # evaluating wrote nothing
    assert rules.check_all(doc) == evaluation.drops and doc.annotations == {}
    assert evaluation.drops[0] == Drop("quality.gopher", "too_few_words", 2, 50)
    assert apply_stage(rules, doc) == evaluation.drops
    assert doc.annotations == evaluation.annotations and doc.annotations["quality.word_count"] == 2


def test_prepared_comparison_is_a_declared_protocol_not_a_probe():
    near = MinHashDedup()
    assert isinstance(near, PreparedComparison) and comparison_of(near) == (near.prepare, near.compare)
    exact = ExactDedup("normalized")
    assert not isinstance(exact, PreparedComparison)
    prepare, compare = comparison_of(exact)
    assert prepare(b"x") == b"x" and compare(b"x", b"x") == 1.0
    assert exact.threshold is None and near.threshold == 0.8
