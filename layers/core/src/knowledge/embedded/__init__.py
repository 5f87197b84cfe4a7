"""embedded"""
