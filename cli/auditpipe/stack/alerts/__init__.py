"""Alerts leaving the stack: forwarded to a SIEM (forwarder.py) as CEF (cef.py), and webhooks (webhook.py)."""
