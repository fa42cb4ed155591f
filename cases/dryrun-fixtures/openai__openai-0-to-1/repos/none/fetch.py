"""Fetches a page. The openai client is declared for a future feature and not used yet."""

import requests


def fetch(url):
    return requests.get(url, timeout=10).text
