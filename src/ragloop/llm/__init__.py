"""Talking to chat models: retries with back-pressure, fault reports, the retrying wrapper.

Below ``eval`` and the loop, above ``core``: both use it, it uses neither.
"""
