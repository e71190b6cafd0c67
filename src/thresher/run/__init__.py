"""Build plans, phases and the engines that run their tasks."""
