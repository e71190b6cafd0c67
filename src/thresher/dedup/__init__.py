"""Exact and near duplicate removal through the phase machinery."""
