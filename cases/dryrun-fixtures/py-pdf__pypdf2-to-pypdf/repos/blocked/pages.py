"""Counts the pages of a PDF and reads the first one."""

from PyPDF2 import PdfReader


def first_page(path):
    reader = PdfReader(path)
    return len(reader.pages), reader.pages[0].extract_text()
