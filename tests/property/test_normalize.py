from hypothesis import given, settings
from hypothesis import strategies as st

from thresher.normalize.text import NormalizeConfig, normalize_text

texts = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x2FFFF, blacklist_categories=("Cs",)), max_size=300)


@settings(max_examples=400)
@given(texts, st.sampled_from(["NFKC", "NFC", None]))
def test_normalize_is_idempotent(text, form):
    config = NormalizeConfig(unicode_form=form)
    once = normalize_text(text, config)
    assert normalize_text(once, config) == once


def test_normalize_cleans_whitespace_controls_and_compatibility_forms():
    raw = "\ufeff  Ｈｅｌｌｏ\u00a0\u00a0world\x07 \r\n\r\n\r\n\tﬁne  \u200b\n  "
    assert normalize_text(raw) == "Hello world\n\nfine"
