"""Tables, plots and the HTML report."""

from dialectbias.report._content import ReportContent
from dialectbias.report._departures import DEPARTURES_CSV, departure_table, departures_section
from dialectbias.report._html import Section, write_html
from dialectbias.report._plots import agreement_scatter, bias_ci_plot, gap_ci_plot, heatmap, rate_plot

__all__ = ["DEPARTURES_CSV", "ReportContent", "Section", "agreement_scatter", "bias_ci_plot", "departure_table",
           "departures_section", "gap_ci_plot", "heatmap", "rate_plot", "write_html"]
