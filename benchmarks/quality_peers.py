"""The peer side of the quality benchmarks. Runs inside the side venv `benchmarks/.venvs/datatrove`
(datatrove 0.10.1, websieve 0.1.2, nltk), never in thresher's own environment:

    python quality_peers.py agreement CORPUS.jsonl OUT.json   # per-rule verdicts of datatrove
    python quality_peers.py throughput CORPUS.jsonl OUT.json  # CPU seconds of datatrove and websieve

English word and sentence splitting: datatrove's English tokenizer is NLTK's, which needs the
`punkt_tab` model that NLTK downloads at run time; offline, we give datatrove the same NLTK word
tokenizer (`NLTKWordTokenizer`, what `word_tokenize` applies per sentence) over an untrained
`PunktSentenceTokenizer`. Only sentence boundaries after abbreviations can differ from the trained
model.
"""

from __future__ import annotations

import json
import sys
import time


def offline_tokenizer():  # noqa: ANN201
    from datatrove.utils.word_tokenizers import WordTokenizer
    from nltk.tokenize.destructive import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    class OfflineEnglish(WordTokenizer):
        def __init__(self) -> None:
            super().__init__("en")
            self.sentences = PunktSentenceTokenizer()
            self.words = NLTKWordTokenizer()

        def word_tokenize(self, text: str) -> list[str]:
            return [t.strip() for s in self.sentences.tokenize(text) for t in self.words.tokenize(s) if t.strip()]

        def sent_tokenize(self, text: str) -> list[str]:
            return [s.strip() for s in self.sentences.tokenize(text) if s.strip()]

        def span_tokenize(self, text: str) -> list[tuple[int, int]]:
            return list(self.sentences.span_tokenize(text))

        def __reduce__(self):  # noqa: ANN204
            return (OfflineEnglish, ())

    return OfflineEnglish()


GOPHER_OFF = dict(min_doc_words=None, max_doc_words=None, min_avg_word_length=None, max_avg_word_length=None,
                  max_symbol_word_ratio=None, max_bullet_lines_ratio=None, max_ellipsis_lines_ratio=None,
                  max_non_alpha_words_ratio=None, min_stop_words=None)
REPETITION_OFF = dict(dup_line_frac=None, dup_para_frac=None, dup_line_char_frac=None, dup_para_char_frac=None,
                      top_n_grams=(), dup_n_grams=())
FINEWEB_OFF = dict(line_punct_thr=-1.0, short_line_thr=2.0, char_duplicates_ratio=2.0, new_line_ratio=1e18)
C4_DOC_OFF = dict(min_num_sentences=-1, filter_lorem_ipsum=False, filter_curly_bracket=False)


def verdict(result) -> tuple[bool, str]:  # noqa: ANN001
    """(passes, reason) from a datatrove filter result."""
    if result is True or result is None:
        return True, ""
    if result is False:
        return False, ""
    return bool(result[0]), result[1]


def checks(tok):  # noqa: ANN001, ANN201
    """(rule name, filter factory, reason test, defined test) for every compared rule."""
    from datatrove.pipeline.filters.c4_filters import C4QualityFilter
    from datatrove.pipeline.filters.fineweb_quality_filter import FineWebQualityFilter
    from datatrove.pipeline.filters.gopher_quality_filter import GopherQualityFilter
    from datatrove.pipeline.filters.gopher_repetition_filter import GopherRepetitionFilter

    def gq(**kw):  # noqa: ANN003, ANN202
        return lambda: GopherQualityFilter(**{**GOPHER_OFF, **kw}, language=tok)

    def gr(**kw):  # noqa: ANN003, ANN202
        return lambda: GopherRepetitionFilter(**{**REPETITION_OFF, **kw}, language=tok)

    def fw(**kw):  # noqa: ANN003, ANN202
        return lambda: FineWebQualityFilter(**{**FINEWEB_OFF, **kw}, language=tok)

    def c4(punct: bool, **kw):  # noqa: ANN003, ANN202
        return lambda: C4QualityFilter(filter_no_terminal_punct=punct, **{**C4_DOC_OFF, **kw}, language=tok)

    out = [
        ("gopher.word_count", gq(min_doc_words=50, max_doc_words=100_000)),
        ("gopher.mean_word_length", gq(min_avg_word_length=3, max_avg_word_length=10)),
        ("gopher.hash_ratio", gq(max_symbol_word_ratio=0.1)),
        ("gopher.ellipsis_ratio", gq(max_symbol_word_ratio=0.1)),
        ("gopher.bullet_line_ratio", gq(max_bullet_lines_ratio=0.9)),
        ("gopher.ellipsis_line_ratio", gq(max_ellipsis_lines_ratio=0.3)),
        ("gopher.alpha_word_ratio", gq(max_non_alpha_words_ratio=0.8)),
        ("gopher.stop_word_count", gq(min_stop_words=2)),
        ("repetition.duplicate_paragraph_fraction", gr(dup_para_frac=0.3)),
        ("repetition.duplicate_paragraph_char_fraction", gr(dup_para_char_frac=0.2)),
        ("repetition.duplicate_line_fraction", gr(dup_line_frac=0.3)),
        ("repetition.duplicate_line_char_fraction", gr(dup_line_char_frac=0.2)),
    ]
    for n, frac in ((2, 0.2), (3, 0.18), (4, 0.16)):
        out.append((f"repetition.top_{n}_gram_char_fraction", gr(top_n_grams=((n, frac),))))
    for n, frac in ((5, 0.15), (6, 0.14), (7, 0.13), (8, 0.12), (9, 0.11), (10, 0.10)):
        out.append((f"repetition.duplicate_{n}_gram_char_fraction", gr(dup_n_grams=((n, frac),))))
    for punct, tag in ((True, "c4"), (False, "fineweb")):
        out += [
            (f"c4[{tag}].lorem_ipsum", c4(punct, filter_lorem_ipsum=True)),
            (f"c4[{tag}].curly_bracket", c4(punct, filter_curly_bracket=True)),
            (f"c4[{tag}].sentence_count", c4(punct, min_num_sentences=5)),
            (f"c4[{tag}].lines", c4(punct)),
        ]
    out += [
        ("fineweb.line_punct_ratio", fw(line_punct_thr=0.12)),
        ("fineweb.short_line_ratio", fw(short_line_thr=0.67)),
        ("fineweb.duplicate_line_char_ratio", fw(char_duplicates_ratio=0.01)),
        ("fineweb.newline_ratio", fw(new_line_ratio=0.3)),
    ]
    return out


def agreement(corpus: str, out_path: str) -> None:
    import warnings

    from datatrove.data import Document

    warnings.filterwarnings("ignore")
    docs = [json.loads(line) for line in open(corpus, encoding="utf-8")]
    tok = offline_tokenizer()
    result: dict[str, dict[str, object]] = {}
    for name, factory in checks(tok):
        filt = factory()
        verdicts: dict[str, object] = {}
        for d in docs:
            doc = Document(text=d["text"], id=d["id"], metadata={"url": d.get("url")})
            try:
                ok, reason = verdict(filt.filter(doc))
            except Exception as exc:  # noqa: BLE001 - datatrove divides by zero on empty documents
                verdicts[d["id"]] = {"error": type(exc).__name__}
                continue
            if name == "gopher.hash_ratio":
                ok = reason != "gopher_too_many_hashes"
            elif name == "gopher.ellipsis_ratio":
                if reason == "gopher_too_many_hashes":
                    verdicts[d["id"]] = {"error": "masked by the hash rule"}
                    continue
                ok = reason != "gopher_too_many_ellipsis"
            entry: dict[str, object] = {"pass": ok, "reason": reason}
            if name.endswith(".lines"):
                entry["text"] = doc.text if ok else None
            verdicts[d["id"]] = entry
        result[name] = verdicts
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(result, f)


def throughput(corpus: str, out_path: str) -> None:
    import warnings

    from datatrove.data import Document
    from datatrove.pipeline.filters.c4_filters import C4QualityFilter
    from datatrove.pipeline.filters.fineweb_quality_filter import FineWebQualityFilter
    from datatrove.pipeline.filters.gopher_quality_filter import GopherQualityFilter
    from datatrove.pipeline.filters.gopher_repetition_filter import GopherRepetitionFilter
    from websieve.quality.heuristics import assess as websieve_assess

    warnings.filterwarnings("ignore")
    docs = [json.loads(line) for line in open(corpus, encoding="utf-8")]
    tok = offline_tokenizer()
    filters = {
        "gopher_quality": GopherQualityFilter(language=tok),
        "gopher_repetition": GopherRepetitionFilter(language=tok),
        "c4": C4QualityFilter(filter_no_terminal_punct=False, language=tok),
        "fineweb": FineWebQualityFilter(language=tok),
    }
    # each filter on every document (the chain cost if no filter dropped anything), then the chain
    # as a pipeline runs it, stopping at the first filter that drops the document
    per_filter: dict[str, float] = {}
    for name, filt in filters.items():
        t0 = time.process_time()
        for d in docs:
            try:
                filt.filter(Document(text=d["text"], id=d["id"]))
            except Exception:  # noqa: BLE001, S110
                pass
        per_filter[name] = time.process_time() - t0
    t0 = time.process_time()
    for d in docs:
        doc = Document(text=d["text"], id=d["id"])
        for filt in filters.values():
            try:
                ok, _ = verdict(filt.filter(doc))
            except Exception:  # noqa: BLE001
                ok = False
            if not ok:
                break
    chain = time.process_time() - t0
    t0 = time.process_time()
    for d in docs:
        websieve_assess(d["text"])
    websieve = time.process_time() - t0
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump({"documents": len(docs), "datatrove_filter_cpu_s": per_filter, "datatrove_chain_cpu_s": chain,
                   "websieve_assess_cpu_s": websieve}, f)


if __name__ == "__main__":
    mode, corpus_path, out = sys.argv[1:4]
    {"agreement": agreement, "throughput": throughput}[mode](corpus_path, out)
