"""Human-facing rendering: progress lines and reports."""
