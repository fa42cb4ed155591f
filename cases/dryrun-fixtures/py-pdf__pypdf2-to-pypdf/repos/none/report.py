"""Builds a text report. # PyPDF2 is listed for a later export step."""

# PyPDF2 will write the PDF version of this report one day.


def report(lines):
    return "\n".join(lines)
