"""The self-correcting graph: state, pure routing functions and the builder that wires them."""
