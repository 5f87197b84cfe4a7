"""adapters/local"""
