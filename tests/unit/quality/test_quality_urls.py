import io
import tarfile

import pytest
from quality_helpers import doc

from thresher.core import ConfigError, Drop
from thresher.quality.urls import UrlFilter, UrlFilterConfig, load_url_lists, split_url

S = "quality.urls"


@pytest.fixture
def lists(tmp_path):
    (tmp_path / "block.txt").write_text("# comment\nbad.com\nwww.worse.org\nexample.net/private/\n")
    (tmp_path / "allow.txt").write_text("good.bad.com\n")
    (tmp_path / "banned.txt").write_text("casino\n")
    (tmp_path / "soft.txt").write_text("free\nhot\ndeals\n")
    (tmp_path / "sub.txt").write_text("xxx\n")
    return tmp_path


def make(lists, **kw):
    return UrlFilter(UrlFilterConfig(
        blocklists=(str(lists / "block.txt"),), allowlists=(str(lists / "allow.txt"),),
        banned_words=str(lists / "banned.txt"), soft_banned_words=str(lists / "soft.txt"),
        banned_subwords=str(lists / "sub.txt"), **kw,
    ))


def test_blocked_domain_and_its_subdomains(lists):
    f = make(lists)
    assert f.check_all(doc("t", "https://bad.com/a")) == [Drop(S, "blocked_domain", "bad.com", "bad.com")]
    assert f.check_all(doc("t", "http://www.shop.bad.com:8080/")) == [
        Drop(S, "blocked_domain", "shop.bad.com", "bad.com")
    ]
    assert f.check_all(doc("t", "https://worse.org")) == [Drop(S, "blocked_domain", "worse.org", "worse.org")]
    assert f.check_all(doc("t", "https://notbad.com/")) == []


def test_blocked_url_prefix(lists):
    f = make(lists)
    assert f.check_all(doc("t", "https://example.net/private/page?q=1")) == [
        Drop(S, "blocked_url", "example.net/private/page", "example.net/private")
    ]
    assert f.check_all(doc("t", "https://example.net/public/page")) == []


def test_allow_list_wins(lists):
    d = doc("t", "https://good.bad.com/casino")
    assert make(lists).check_all(d) == []
    assert d.annotations["quality.url_allowed"] is True


def test_banned_soft_and_sub_words(lists):
    f = make(lists)
    assert f.check_all(doc("t", "https://a.org/casino-night")) == [
        Drop(S, "banned_url_word", 1, 0, {"words": ["casino"]})
    ]
    assert f.check_all(doc("t", "https://a.org/free-hot-deals")) == [
        Drop(S, "soft_banned_url_words", 3, 1, {"words": ["deals", "free", "hot"]})
    ]
    assert f.check_all(doc("t", "https://a.org/free")) == []
    assert f.check_all(doc("t", "https://a.org/bigxxxvideos")) == [
        Drop(S, "banned_url_subword", 1, 0, {"subword": "xxx"})
    ]


def test_malformed_and_missing_urls(lists):
    f = make(lists)
    assert f.check_all(doc("t", None)) == []
    assert f.check_all(doc("t", "http://[::1")) == [Drop(S, "malformed_url", "http://[::1", None)]
    assert f.check_all(doc("t", "not a url")) == [Drop(S, "malformed_url", "not a url", None)]
    assert make(lists, drop_malformed=False).check_all(doc("t", "http://")) == []


def test_ut1_directory_and_tarball(tmp_path):
    cat = tmp_path / "ut1" / "gambling"
    cat.mkdir(parents=True)
    (cat / "domains").write_text("casino.example\n")
    (cat / "urls").write_text("host.example/poker\n")
    buf = io.BytesIO(b"big.example\n")
    with tarfile.open(tmp_path / "list.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo("blacklists/adult/domains")
        info.size = len(buf.getvalue())
        tar.addfile(info, buf)
    got = load_url_lists([str(tmp_path / "ut1"), str(tmp_path / "list.tar.gz")])
    assert got.domains == {"casino.example", "big.example"}
    assert got.urls == {"host.example/poker"}


def test_unreadable_list_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError):
        load_url_lists([str(tmp_path / "missing.txt")])


def test_split_url_normalises_host_and_path():
    assert split_url("HTTPS://WWW.Example.COM./a/b/?x=1#f") == ("example.com", "example.com/a/b")
    assert split_url("example.com/path") == ("example.com", "example.com/path")
    assert split_url("mailto:someone") is None


def test_real_ut1_category_and_fineweb_word_lists(shared_data):
    lists = shared_data / "blocklists"
    f = UrlFilter(UrlFilterConfig(
        blocklists=(str(lists / "ut1" / "gambling"),),
        banned_words=str(lists / "fineweb-url-words" / "banned_words.txt"),
        soft_banned_words=str(lists / "fineweb-url-words" / "soft_banned_words.txt"),
        banned_subwords=str(lists / "fineweb-url-words" / "banned_subwords.txt"),
    ))
    assert len(f.block.domains) > 30_000
    assert f.check_all(doc("t", "https://www.0-casino.info/play")) == [
        Drop(S, "blocked_domain", "0-casino.info", "0-casino.info")
    ]
    assert f.check_all(doc("t", "https://en.wikipedia.org/wiki/Tide")) == []


def test_large_domain_lists_are_held_as_digests_with_the_same_answers(tmp_path, monkeypatch):
    from thresher.quality import url_lists, urls

    listing = tmp_path / "adult"
    listing.mkdir()
    names = [f"site{i}.example" for i in range(3000)] + ["www.spaced.example.", "# a comment", ""]
    (listing / "domains").write_text("\n".join(names) + "\n")
    small = urls.load_url_lists([str(tmp_path)])
    monkeypatch.setattr(url_lists, "DIGEST_FILE_BYTES", 1000)
    large = urls.load_url_lists([str(tmp_path)])
    assert isinstance(large.domains, urls.DomainDigests) and isinstance(small.domains, set)
    assert len(large.domains) == len(small.domains) == 3001
    for host in ["site17.example", "a.b.site2999.example", "spaced.example", "site3000.example", "example"]:
        assert urls._host_listed(host, large.domains) == urls._host_listed(host, small.domains)
