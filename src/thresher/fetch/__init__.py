"""Fetching a URL list into WARC files: URL hygiene, target safety, politeness, retries and caps,
resumable WARC output. `thresher fetch urls.txt -o crawl/`; the library entry point is
`thresher.fetch.crawl.fetch_urls`. Needs the `fetch` extra (aiohttp, protego), imported lazily."""
