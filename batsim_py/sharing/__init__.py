"""sharing"""
