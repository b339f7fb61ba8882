"""Tables, plots and the HTML report."""

from dialectbias.report._html import Section, write_html
from dialectbias.report._plots import heatmap

__all__ = ["Section", "heatmap", "write_html"]
