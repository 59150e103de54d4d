"""The self-correcting graph: pure routing functions and the builder that wires them.

The state types live in ``ragloop.state`` so nodes and builder share them.
"""
