"""Evaluating trained policies: episode bookkeeping, saved runs played again, recordings and the report."""
