"""Graph nodes (one module each) and the strategies behind their LLM steps."""
