"""A synthetic crawl for `thresher demo`: small, deterministic, and shaped like a real one.

Every page is HTML with a site template around it (navigation, cookie banner, share bar, related
links, footer). The crawl mixes what a real crawl has: articles in several languages, the same
article under a second URL (exact duplicate), lightly edited copies (near duplicates: a changed
date, a swapped sentence, an added byline), link farms and keyword spam, stub pages, and a few
malformed records. All text here was written for this module.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from html import escape
from pathlib import Path

SITES = ("riverbend-news.example", "quietlab.example", "hearth-and-table.example", "wandering-rails.example")

TOPICS: dict[str, list[str]] = {
    "de": [
        "Der Gemeinderat hat am Dienstag beschlossen, den Uferweg um weitere vier Kilometer zu verlängern.",
        "Anwohner hatten seit Jahren einen sicheren Weg zum Markt gefordert, und der neue Plan gibt ihnen recht.",
        "Die Arbeiten sollen im Frühjahr beginnen, sobald der Boden nach dem Hochwasser getrocknet ist.",
        "Die größte Herausforderung ist nach Angaben der Ingenieure die alte Eisenbahnbrücke.",
        "Ein örtlicher Radverein begrüßte die Entscheidung, hält das Budget aber für zu knapp.",
        "Der Bürgermeister sagte, der Weg werde drei Schulen, zwei Parks und das Krankenhaus verbinden.",
        "Mehrere Ladenbesitzer am Wasser erwarten an den Wochenenden deutlich mehr Besucher.",
        "Kritiker erinnern daran, dass die letzte Verlängerung zwei Jahre zu spät fertig wurde.",
        "Der Rat hat monatliche Berichte und eine öffentliche Versammlung vor Baubeginn versprochen.",
        "Vogelfreunde baten darum, den Abschnitt am Moor während der Brutzeit zu sperren.",
        "Für die meisten Menschen im Viertel bedeutet die Nachricht einfach einen ruhigeren Weg zur Arbeit.",
        "Brotteig braucht vor allem Zeit, deshalb gelingt eine lange Gare über Nacht so gut.",
    ],
    "fr": [
        "Le conseil municipal a voté mardi le prolongement du chemin de la rivière sur quatre kilomètres.",
        "Les habitants réclamaient depuis des années un trajet plus sûr vers le marché.",
        "Les travaux devraient commencer au printemps, lorsque le sol aura séché après les crues.",
        "Selon les ingénieurs, la principale difficulté reste le vieux pont ferroviaire.",
        "Une association de cyclistes salue la décision mais juge le budget trop serré pour le pont.",
        "Le maire affirme que le chemin reliera trois écoles, deux parcs et l'hôpital de la rive nord.",
        "Plusieurs commerçants installés au bord de l'eau s'attendent à davantage de visiteurs le week-end.",
        "Les critiques rappellent que le précédent prolongement avait pris deux ans de retard.",
        "Le conseil promet un compte rendu mensuel et une réunion publique avant le début du chantier.",
        "Pour la plupart des habitants du quartier, cette nouvelle signifie un trajet plus calme.",
    ],
    "es": [
        "El ayuntamiento aprobó el martes ampliar el paseo del río otros cuatro kilómetros.",
        "Los vecinos llevaban años pidiendo un camino más seguro hasta el mercado.",
        "Las obras comenzarán en primavera, cuando el terreno se haya secado tras las inundaciones.",
        "Según los ingenieros, el mayor reto es el antiguo puente del ferrocarril.",
        "Un club ciclista local celebró la decisión, aunque considera escaso el presupuesto.",
        "El alcalde dijo que el paseo unirá tres colegios, dos parques y el hospital de la orilla norte.",
        "Varios comerciantes junto al agua esperan más visitantes los fines de semana.",
        "Los críticos recuerdan que la ampliación anterior terminó con dos años de retraso.",
        "Para la mayoría del barrio, la noticia significa sencillamente un camino más tranquilo al trabajo.",
    ],
    "zh": [
        "市议会周二投票决定将河边步道再延长四公里。",
        "多年来居民一直希望有一条更安全的道路通往市场，新计划终于回应了他们。",
        "工程预计在明年春天开始，等冬季洪水过后地面变干再动工。",
        "工程师表示，最大的难题是那座从未为行人设计的旧铁路桥。",
        "当地的自行车协会对这一决定表示欢迎，但担心预算不足以改造桥梁。",
        "市长说，这条步道将连接三所学校、两个公园和北岸的医院。",
        "沿河的几位店主告诉我们，他们预计周末的游客会明显增加。",
        "批评者指出，上一次延长工程拖延了两年，而且严重超支。",
        "对于社区里的大多数人来说，这个消息意味着一条更安静的上班路线。",
    ],
}

TITLES = {
    "en": ("River path to grow by four kilometres", "Slow bread, better bread", "A first night with a telescope"),
    "de": ("Uferweg wird um vier Kilometer länger",),
    "fr": ("Le chemin de la rivière prolongé de quatre kilomètres",),
    "es": ("El paseo del río crecerá cuatro kilómetros",),
    "zh": ("河边步道将延长四公里",),
}

# English articles are generated from templates, so that two articles share sentences only by
# design (a duplicate), not by chance; other languages draw from the small banks above.
TEMPLATES = (
    "{person} said on {weekday} that the {thing} near {place} will need about {n} more weeks of work.",
    "Most of the {n} people who came to the meeting at {place} wanted to know who would pay for the {thing}.",
    "In {month}, the {thing} at {place} was closed after inspectors found cracks in the old supports.",
    "{person}, who has lived near {place} for {n} years, remembers when the {thing} was first built.",
    "The plan for the {thing} still has to be approved by the regional office, which meets again in {month}.",
    "According to {person}, a simpler design for the {thing} could save close to {n} thousand euros.",
    "Children from the school by {place} painted a mural beside the {thing} last {month}.",
    "Nobody expects the work on the {thing} to finish before {month}, but the first section could open sooner.",
    "Traffic around {place} has been slower since the {thing} was fenced off on a {weekday} in {month}.",
    "{person} wants the council to publish every contract related to the {thing} before {month}.",
    "Shops near {place} report fewer customers on weekdays, although {weekday} markets still draw crowds.",
    "A survey of {n} households found that most support the {thing}, though many worry about noise.",
    "Engineers from {place} tested the soil under the {thing} {n} times before they agreed on the depth.",
    "{person} described the {thing} as the most useful thing the town has built in a generation.",
)
PEOPLE = ("Maria Okafor", "Tom Brennan", "Dr. Ines Varga", "the deputy mayor", "Priya Raman", "Jonas Berg",
          "a spokesperson for the contractor", "Helen Doyle", "Samuel Adeyemi", "the head of the parents' council")
PLACES = ("Old Harbour", "Elm Row", "the north bank", "Castle Hill", "the railway yard", "Marsh Lane",
          "the market square", "Linden Park", "Quarry Road", "St. Anne's church")
THINGS = ("footbridge", "library extension", "bus depot", "community pool", "flood barrier", "cycle path",
          "school gym", "water tower", "tram stop", "sports hall")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _english_article(rng: random.Random) -> tuple[str, list[list[str]]]:
    thing = rng.choice(THINGS)
    place = rng.choice(PLACES)
    sentences = []
    for template in rng.sample(TEMPLATES, k=rng.randint(9, 13)):
        sentences.append(
            template.format(
                person=rng.choice(PEOPLE), place=place if rng.random() < 0.6 else rng.choice(PLACES), thing=thing,
                n=rng.randint(3, 400), month=rng.choice(MONTHS), weekday=rng.choice(WEEKDAYS),
            )
        )
    sentences = [s[0].upper() + s[1:] for s in sentences]
    paragraphs = []
    while sentences:
        k = rng.randint(2, 4)
        paragraphs.append(sentences[:k])
        sentences = sentences[k:]
    title = f"What next for the {thing} at {place}?"
    return title, paragraphs


NAV = ("Home", "World", "Local", "Food", "Science", "Opinion", "Subscribe", "Log in")
FOOTER = "© {year} {site}. All rights reserved. Privacy policy · Terms of use · Cookie settings · Contact"
COOKIE = (
    "We use cookies to improve your experience. By continuing to browse you accept our use of cookies. "
    "Accept all · Manage preferences"
)
SPAM_WORDS = ("cheap", "pills", "casino", "bonus", "free", "win", "best", "price", "online", "now")


def _template(site: str, title: str, body_html: str, lang: str, year: int, related: list[str]) -> str:
    nav = "".join(f'<li><a href="/{n.lower().replace(" ", "-")}">{n}</a></li>' for n in NAV)
    rel = "".join(f'<li><a href="/a/{i}">{escape(t)}</a></li>' for i, t in enumerate(related))
    return (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{escape(title)} | {site}</title>'
        f'<meta name="description" content="{escape(title)}"></head><body>'
        f'<div class="cookie-banner" id="cookie-consent"><p>{COOKIE}</p></div>'
        f'<header><div class="logo">{site}</div><nav class="main-nav"><ul>{nav}</ul></nav></header>'
        f'<main><article><h1>{escape(title)}</h1><p class="byline">By the newsroom · '
        f'{year}-0{1 + year % 9}-1{year % 10}</p>'
        f"{body_html}</article>"
        f'<div class="share-bar"><a href="#">Share on social</a> <a href="#">Email</a> <a href="#">Print</a></div>'
        f'<aside class="related"><h3>Related stories</h3><ul>{rel}</ul></aside></main>'
        f'<footer class="site-footer"><p>{FOOTER.format(year=year, site=site)}</p></footer></body></html>'
    )


def _article(rng: random.Random, lang: str) -> list[list[str]]:
    """A bank article: the language's sentences, each used once, in a random order."""
    sentences = rng.sample(TOPICS[lang], k=len(TOPICS[lang]))
    return [sentences[i : i + 3] for i in range(0, len(sentences), 3)]


def _body(paragraphs: list[list[str]]) -> str:
    return "".join(f"<p>{escape(' '.join(p))}</p>" for p in paragraphs)


def generate_crawl(n_pages: int = 600, seed: int = 7) -> Iterator[str]:
    """Lines of a JSONL crawl (`url`, `html`, `fetched_at`), with a few malformed lines mixed in."""
    rng = random.Random(seed)
    langs = ["en"] * 12 + ["de", "fr", "es", "zh"]
    originals: list[dict[str, str]] = []
    for i in range(n_pages):
        site = SITES[i % len(SITES)]
        url = f"https://{site}/a/{i:05d}"
        year = 2020 + i % 6
        fetched = f"{year}-0{1 + i % 9}-{10 + i % 18}T12:00:00Z"
        roll = rng.random()
        if originals and roll < 0.12:  # exact duplicate: the same page under another URL
            src = rng.choice(originals)
            record = {"url": url, "html": src["html"], "fetched_at": fetched}
        elif originals and roll < 0.24:  # near duplicate: the same article, lightly edited
            src = rng.choice(originals)
            html = src["html"].replace("By the newsroom", "By our correspondent")
            html = html.replace("</article>", "<p>Updated with comments from the council.</p></article>", 1)
            record = {"url": url + "?utm_source=feed", "html": html, "fetched_at": fetched}
        elif roll < 0.30:  # keyword spam
            words = " ".join(rng.choice(SPAM_WORDS) for _ in range(rng.randint(80, 200)))
            html = _template(site, "BEST PRICE NOW", f"<p>{words}</p>", "en", year, ["win", "free", "bonus"])
            record = {"url": url, "html": html, "fetched_at": fetched}
        elif roll < 0.34:  # link farm
            links = "".join(f'<li><a href="https://spam{j}.example/">best deal {j}</a></li>' for j in range(60))
            html = _template(site, "Top links", f"<ul>{links}</ul>", "en", year, [])
            record = {"url": url, "html": html, "fetched_at": fetched}
        elif roll < 0.38:  # stub page
            html = _template(site, "Coming soon", "<p>Coming soon.</p>", "en", year, [])
            record = {"url": url, "html": html, "fetched_at": fetched}
        else:
            lang = rng.choice(langs)
            if lang == "en":
                title, paragraphs = _english_article(rng)
            else:
                title, paragraphs = rng.choice(TITLES[lang]), _article(rng, lang)
            related = [rng.choice(TITLES[rng.choice(langs)]) for _ in range(4)]
            html = _template(site, title, _body(paragraphs), lang, year, related)
            record = {"url": url, "html": html, "fetched_at": fetched}
            originals.append(record)
        yield json.dumps(record, ensure_ascii=False)
        if i % 150 == 149:  # malformed input, as real crawls have
            yield '{"url": "https://broken.example/x", "html": '  # truncated line
            yield '["not", "an", "object"]'


def write_crawl(path: str | Path, n_pages: int = 600, seed: int = 7) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for line in generate_crawl(n_pages, seed):
            f.write(line + "\n")
    return path
