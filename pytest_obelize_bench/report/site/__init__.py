"""The results as pages of the documentation site, generated from the published data alone.

``pages.py`` reads what ``results/`` publishes and writes ``docs/results/`` (``obelize-bench docs``,
checked by its ``--check`` and by ``summarize --check``); ``case_page.py`` renders one case of one
round; ``escape.py`` keeps whatever a repository wrote from reaching a page as anything but text.
"""
