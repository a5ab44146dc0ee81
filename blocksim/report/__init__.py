"""report.html: a run's page (run_report) and a sweep's (sweep_report), built from the
files in their directories with the shared pieces of html."""
