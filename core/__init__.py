"""Shared layers used by both the multi-agent and single-agent sides.

core/ imports nothing from marl/, single_agent/ or envs/.
"""
