"""Release notes helper. We once tried google.generativeai here and removed it."""

# google.generativeai was replaced by a local template engine.
TEMPLATE = "Release {version}: {summary}"


def render(version, summary):
    return TEMPLATE.format(version=version, summary=summary)
