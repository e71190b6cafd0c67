from hypothesis import given, settings
from hypothesis import strategies as st

from thresher.normalize.text import NormalizeConfig, normalize_text

texts = st.text(
    alphabet=st.characters(min_codepoint=0, max_codepoint=0x2FFFF, blacklist_categories=("Cs",)), max_size=300
)


@settings(max_examples=400)
@given(texts, st.sampled_from(["NFKC", "NFC", None]))
def test_normalize_is_idempotent(text, form):
    config = NormalizeConfig(unicode_form=form)
    once = normalize_text(text, config)
    assert normalize_text(once, config) == once


def test_normalize_cleans_whitespace_controls_and_compatibility_forms():
    raw = "\ufeff  Ｈｅｌｌｏ\u00a0\u00a0world\x07 \r\n\r\n\r\n\tﬁne  \u200b\n  "
    assert normalize_text(raw) == "Hello world\n\nfine"


def _every_step(text: str, config: NormalizeConfig) -> str:
    """The definition: every step applied unconditionally, in order (normalize_text skips steps
    whose precondition fails and must give the same text)."""
    import re
    import unicodedata

    form = config.unicode_form
    if form is not None:
        text = unicodedata.normalize(form, text)
    text = re.sub(r"\r\n?|[\u2028\u2029\x85]", "\n", text)
    text = re.sub(
        r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\ufeff\ufffe]", "", text
    )
    if config.collapse_whitespace:
        text = re.sub(r"[\t\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]", " ", text)
        text = re.sub(r" {2,}", " ", text)
        text = re.sub(r" +$", "", text, flags=re.M)
        text = re.sub(r"^ +", "", text, flags=re.M)
        text = re.sub(r"\n{3,}", "\n\n", text)
    text = text.strip("\n ")
    if form is not None:
        text = unicodedata.normalize(form, text)
    return text


# whitespace-heavy texts exercise the skipped-step preconditions
spaced = st.text(alphabet=st.sampled_from(list("ab \n\r\t\u00a0\u2028\x85\x07\u200bé\ufb01Ｈ")), max_size=60)


@settings(max_examples=600)
@given(st.one_of(texts, spaced), st.sampled_from(["NFKC", "NFC", None]), st.booleans())
def test_normalize_equals_every_step_applied(text, form, collapse):
    config = NormalizeConfig(unicode_form=form, collapse_whitespace=collapse)
    assert normalize_text(text, config) == _every_step(text, config)
