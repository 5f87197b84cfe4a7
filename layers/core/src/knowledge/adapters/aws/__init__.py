"""adapters/aws"""
