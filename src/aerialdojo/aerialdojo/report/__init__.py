"""Run reports: every file of a scored run (``run``), its Markdown tables (``markdown``),
plots (``plots``) and run-to-run comparison (``compare``)."""
