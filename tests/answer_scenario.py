"""The answer-time scenario both deployments are tested with (tests/e2e/test_answer_api.py over
``kb serve``, tests/functional/test_answer_handlers.py through the Lambda handlers): a pack, a
live table, a fee question and a ticket."""

from __future__ import annotations

from tests.conftest import page

FEE_Q = "What is the BTC withdrawal fee?"
PAGES = [
    page("help/fees.md", "# Withdrawal fees\n\nWithdrawal fees for BTC depend on the network and are shown "
         "before you confirm the withdrawal.", audience="CUSTOMER", title="Withdrawal fees"),
    page("help/password.md", "# Password\n\nReset your password from the sign-in page.", audience="CUSTOMER"),
]
ROWS = [
    {"area": "withdrawal", "name": "Bitcoin", "code": "BTC", "fixedFee": 0.0005, "processingTime": "up to 1 hour"},
    {"area": "withdrawal", "name": "Ether", "code": "ETH", "fixedFee": 0.004},
]
TICKET = {
    "title": "Heron plan charged twice",
    "messages": [
        {"role": "customer", "text": "Hi, I am jane.doe@example.com, my card 4111 1111 1111 1111 was charged "
                                     "twice for the heron plan"},
        {"role": "agent", "text": "We refunded the duplicate heron charge; call +44 20 7946 0958 if it happens "
                                  "again."},
    ],
}
