"""refresh"""
