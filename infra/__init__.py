"""CDK constructs of the kb AWS deployment: one module per concern, wired by ``stack.py``."""
