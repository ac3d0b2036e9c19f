"""Bisq interop (docs/protocol.md §8): Herald's Bisq encryption against pycryptodome's AES-CBC, which eth-account
already brings along (through eth-keyfile), so no package is added.

Python plays a Bisq relay: a small HTTP server answers `GET /relay` with `success` and keeps the message;
`herald bisq pair` and `herald bisq send` send to it. Each message must decrypt here, exactly as a Bisq
phone decrypts it (AES-256-CBC, key = the 32 characters, IV = the 16 characters in the clear, spaces
as padding). The other way round, a message this script encrypts must decrypt in `herald inbox ingest
--bisq-key`, and the vectors' messages must decrypt here too.
"""

import base64
import http.server
import json
import os
import secrets
import threading
import urllib.parse

from Crypto.Cipher import AES

from interop_checks import expect

KEY = "".join(secrets.choice("0123456789abcdef") for _ in range(32))
IOS_TOKEN = secrets.token_hex(32)


def decrypt(message, key):
    magic, iv, ciphertext = message.split("|")
    expect(magic in ("BisqMessageiOS", "BisqMessageAndroid"), f"unknown magic {magic}")
    expect(len(iv.encode()) == 16, "the IV is not 16 bytes")
    cipher = AES.new(key.encode(), AES.MODE_CBC, iv.encode())
    plaintext = cipher.decrypt(base64.b64decode(ciphertext))
    return json.loads(plaintext.decode("utf-8").rstrip(" "))


def encrypt(payload, key, magic="BisqMessageiOS"):
    iv = secrets.token_hex(8)
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 16)
    ciphertext = AES.new(key.encode(), AES.MODE_CBC, iv.encode()).encrypt(text)
    return f"{magic}|{iv}|{base64.b64encode(ciphertext).decode()}"


class FakeRelay:
    """`GET /relay` as Bisq's relay answers it; keeps each request's decoded parameters."""

    def __init__(self):
        self.received = []
        relay = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                relay.received.append({name: values[0] for name, values in query.items()})
                body = b"success"
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def last_message(self):
        expect(self.received, "the relay received nothing")
        return bytes.fromhex(self.received[-1]["msg"]).decode("utf-8")

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def check_bisq_herald_encrypts_as_bisq(herald, scratch):
    home = herald.new_home()
    relay = FakeRelay()
    try:
        token = f"iOS|Interop phone|{KEY}|{IOS_TOKEN}"
        herald.run(home, "bisq", "pair", token, "--server", relay.url)
        setup = decrypt(relay.last_message(), KEY)
        expect(setup["type"] == "SETUP_CONFIRMATION", f"pairing sent {setup['type']}")
        params = relay.received[-1]
        expect(bytes.fromhex(params["token"]).decode() == IOS_TOKEN, "the relay got another device token")
        expect(params["isAndroid"] == "false" and params["isProduction"] == "true", f"flags {params}")
        mode = os.stat(os.path.join(home, "bisq.json")).st_mode & 0o777
        expect(mode == 0o600, f"bisq.json has mode {oct(mode)}")
        herald.run(
            home, "bisq", "send", "--type", "TRADE", "--title", "Trade accepted ✓",
            "--message", "Zahlung starten — 0.01 BTC", "--tx", "8b1cde0f", "--sound",
        )
        trade = decrypt(relay.last_message(), KEY)
        expect(trade["title"] == "Trade accepted ✓", f"title {trade['title']!r}")
        expect(trade["message"] == "Zahlung starten — 0.01 BTC", f"message {trade['message']!r}")
        expect(trade["txId"] == "8b1cde0f" and trade["version"] == 1, f"fields {trade}")
        expect(isinstance(trade["sentDate"], int), "sentDate is not an integer")
        expect(relay.received[-1]["snd"] == "true", "--sound did not set snd")
        _, listed, _ = herald.run(home, "bisq", "phones", "--json")
        expect(KEY not in listed, "bisq phones printed the key")
        return "pairing and a TRADE message decrypt with pycryptodome AES-CBC"
    finally:
        relay.close()


def check_bisq_ingest_decrypts_python(herald, scratch):
    home = herald.new_home()
    payload = {
        "sentDate": 1763769600123, "txId": "42", "title": "Dispute opened",
        "message": "A mediator joined — reply within 48h.", "type": "DISPUTE", "actionRequired": "", "version": 1,
    }
    push = os.path.join(scratch, "bisq-push.json")
    with open(push, "w", encoding="utf-8") as handle:
        json.dump({"aps": {"alert": {"loc-key": "notification"}, "content-available": 1},
                   "encrypted": encrypt(payload, KEY)}, handle)
    shown = herald.json(home, "inbox", "ingest", push, "--bisq-key", KEY)
    expect(shown == payload, f"herald read {shown}")
    return "a message pycryptodome encrypted decrypts in herald inbox ingest --bisq-key"


def check_bisq_vectors_decrypt_in_python(herald, scratch):
    vectors = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "HeraldCoreTests",
                           "Vectors", "bisq.json")
    with open(vectors, encoding="utf-8") as handle:
        cases = json.load(handle)["messages"]
    for case in cases:
        expect(decrypt(case["message"], case["key"]) == json.loads(case["plaintext_json"]), f"vector {case['iv']}")
    return f"{len(cases)} vectors"


CHECKS = [
    ("h) bisq: herald's Bisq messages decrypt with pycryptodome AES-CBC", check_bisq_herald_encrypts_as_bisq),
    ("h) bisq: herald inbox ingest --bisq-key decrypts a pycryptodome message", check_bisq_ingest_decrypts_python),
    ("h) bisq: the vectors decrypt with pycryptodome", check_bisq_vectors_decrypt_in_python),
]
