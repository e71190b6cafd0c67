"""The names `[pii]` accepts: the kinds of personal data and the phone regions.

In a module of their own so that the config, which every command imports, lists and checks them
without compiling the detectors' patterns (~8 ms at import, `benchmarks/startup_costs.py`)."""

# The kinds `detect` finds, in priority order for equal spans (`thresher.pii.detection`).
TYPES = ("email", "iban", "card", "ip", "phone", "obfuscated_email")

# Region names accepted by `pii.phone_regions`; US and CA share the NANP plan.
REGIONS = ("US", "CA", "GB", "DE", "FR", "ES", "IT", "NL", "IN", "JP", "BR", "AU")
