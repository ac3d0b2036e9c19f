"""Web Push interoperability (docs/protocol.md §9): what `herald serve` sends decrypts with http-ece, a
Python Web Push implementation (RFC 8291 `aes128gcm`), under the subscription's private key, and
its VAPID JWT (RFC 8292) verifies with the `cryptography` package against the key
`herald webpush keygen` printed. The other way round, a body http-ece encrypted for a subscription
`herald webpush subscribe` made decrypts in `herald inbox ingest --webpush`.

Python plays both the push service (HTTPS on loopback, a certificate made here) and the browser
(a P-256 key and a 16-byte auth, and a WebPushBinding eth-account signed).
"""

import base64
import datetime
import http.server
import json
import os
import queue
import re
import secrets
import ssl
import subprocess
import threading
import time
import urllib.request

import http_ece
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.x509.oid import NameOID
from eth_account import Account

from herald_signing import envelope, window
from interop_checks import CheckFailed, expect

AUDIENCE = "herald-interop-webpush"
SUBJECT = "mailto:interop@example.org"
LISTENING = re.compile(r"herald listening on http://127\.0\.0\.1:(\d+) ")


def b64url(data):
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class PushService:
    """A Web Push service on https://localhost:PORT: records every POST, answers 201."""

    def __init__(self, scratch):
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "interop-push")])
        now = datetime.datetime.now(datetime.timezone.utc)
        certificate = (
            x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256())
        )
        self.ca_file = os.path.join(scratch, "push-ca.pem")
        key_file = os.path.join(scratch, "push-key.pem")
        with open(self.ca_file, "wb") as handle:
            handle.write(certificate.public_bytes(serialization.Encoding.PEM))
        with open(key_file, "wb") as handle:
            handle.write(key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        self.received = queue.Queue()
        service = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                service.received.put((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.ca_file, key_file)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def origin(self):
        return f"https://localhost:{self.server.server_address[1]}"

    def next(self, timeout=20):
        try:
            return self.received.get(timeout=timeout)
        except queue.Empty:
            raise CheckFailed(f"the push service received nothing within {timeout} s")

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class WebPushServer:
    """`herald serve` with a VAPID key, trusting the push service's certificate, loopback allowed."""

    def __init__(self, binary, scratch, vapid_file, ca_file):
        env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
        command = [
            binary, "serve", "--port", "0", "--database", os.path.join(scratch, "webpush.sqlite"),
            "--audience", AUDIENCE, "--rate-limit", "0", "--log-level", "warning",
            "--webpush-vapid-key-file", vapid_file, "--webpush-subject", SUBJECT,
            "--webpush-ca-file", ca_file, "--webpush-allow-network", "127.0.0.0/8",
        ]
        self.process = subprocess.Popen(
            command, env=env, cwd=scratch, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        for raw in self.process.stdout:
            match = LISTENING.match(raw.decode("utf-8", "replace"))
            if match:
                self.url = f"http://127.0.0.1:{match.group(1)}"
                break
            if time.monotonic() > deadline:
                break
        else:
            raise CheckFailed(f"herald serve with Web Push exited {self.process.wait()} before listening")
        threading.Thread(target=lambda: [None for _ in self.process.stdout], daemon=True).start()

    def post(self, path, body):
        request = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=10)


def verify_vapid(headers, origin, public_key_text):
    """RFC 8292: `vapid t=<JWT>,k=<key>`; ES256 over `header.claims` by k; aud, exp, sub."""
    authorization = headers.get("authorization", "")
    match = re.fullmatch(r"vapid t=([^,]+),k=([A-Za-z0-9_-]+)", authorization)
    expect(match, f"Authorization is not vapid t=…,k=…: {authorization[:40]!r}")
    token, key_text = match.groups()
    expect(key_text == public_key_text, "k is not the key herald webpush keygen printed")
    header_b64, claims_b64, signature_b64 = token.split(".")
    header = json.loads(unb64url(header_b64))
    claims = json.loads(unb64url(claims_b64))
    expect(header == {"typ": "JWT", "alg": "ES256"}, f"JWT header {header}")
    signature = unb64url(signature_b64)
    expect(len(signature) == 64, "the ES256 signature is not r ‖ s")
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    public_key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(key_text))
    try:
        public_key.verify(der, f"{header_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise CheckFailed("the VAPID JWT does not verify with k")
    expect(claims.get("aud") == origin, f"aud {claims.get('aud')} is not {origin}")
    expect(claims.get("sub") == SUBJECT, f"sub {claims.get('sub')}")
    now = int(time.time())
    expect(now < claims.get("exp", 0) <= now + 12 * 3600 + 60, f"exp {claims.get('exp')} is not within 12 h")


def check_webpush_decrypts_with_http_ece(herald, scratch):
    vapid_file = os.path.join(scratch, "vapid.pem")
    _, keygen, _ = herald.run(herald.new_home(), "webpush", "keygen", "--out", vapid_file, passphrase=None)
    vapid_public = keygen.strip()
    expect(len(vapid_public) == 87, f"keygen printed {keygen!r}")
    expect(os.stat(vapid_file).st_mode & 0o777 == 0o600, "the VAPID key file is not 0600")
    service = PushService(scratch)
    server = WebPushServer(herald.binary, scratch, vapid_file, service.ca_file)
    try:
        subscriber = ec.generate_private_key(ec.SECP256R1())
        p256dh = subscriber.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        auth = secrets.token_bytes(16)
        account = Account.create()
        issued, expires = window()
        for scheme, path in (("eip712", "/interop/one?up=1"), ("eip191", "/interop/two")):
            message = {
                "action": "register", "wallet": account.address, "endpoint": service.origin + path,
                "p256dh": b64url(p256dh), "auth": b64url(auth), "audience": AUDIENCE,
                "nonce": secrets.randbits(128), "issuedAt": issued, "expiresAt": expires,
            }
            answer = server.post("/v1/webpush", envelope(account, message, scheme, primary="WebPushBinding"))
            expect(answer.get("status") == "registered", f"{scheme}: {answer}")
            received_path, headers, body = service.next()
            expect(received_path == path, f"the push went to {received_path}, not {path}")
            expect(headers.get("content-encoding") == "aes128gcm", f"Content-Encoding {headers.get('content-encoding')}")
            expect(len(body) <= 4096, f"a body of {len(body)} bytes")
            verify_vapid(headers, service.origin, vapid_public)
            plaintext = http_ece.decrypt(body, private_key=subscriber, auth_secret=auth, version="aes128gcm")
            payload = json.loads(plaintext)
            expect(payload["data"]["type"] == "setup", f"payload {payload}")
            expect(payload["notification"]["title"] == "Herald", f"payload {payload}")
        return "setup confirmations (EIP-712 and EIP-191 bindings) decrypt with http-ece; VAPID ES256 verifies"
    finally:
        server.close()
        service.close()


def check_http_ece_body_decrypts_in_herald(herald, scratch):
    home = herald.new_home()
    herald.run(home, "wallet", "create", "--light")
    vapid_file = os.path.join(scratch, "vapid-2.pem")
    herald.run(herald.new_home(), "webpush", "keygen", "--out", vapid_file, passphrase=None)
    service = PushService(scratch)
    server = WebPushServer(herald.binary, scratch, vapid_file, service.ca_file)
    try:
        endpoint = service.origin + "/interop/cli"
        herald.run(home, "webpush", "subscribe", "--server", server.url, "--endpoint", endpoint)
        service.next()  # the setup confirmation
        listed = herald.json(home, "webpush", "list")
        expect(len(listed) == 1 and "privateKey" not in listed[0], f"webpush list printed {listed}")
        payload = {
            "notification": {"title": "From Python ✓", "body": "http-ece"},
            "data": {"type": "3", "sid": "77", "epoch": "1763769600123", "app": "Interop", "icon": "", "url": "",
                     "secret": "", "asub": "From Python ✓", "amsg": "encrypted by http-ece", "acta": "", "aimg": ""},
        }
        body = http_ece.encrypt(
            json.dumps(payload, ensure_ascii=False).encode(), salt=secrets.token_bytes(16),
            private_key=ec.generate_private_key(ec.SECP256R1()), dh=unb64url(listed[0]["p256dh"]),
            auth_secret=unb64url(listed[0]["auth"]), version="aes128gcm")
        push = os.path.join(scratch, "http-ece-body.bin")
        with open(push, "wb") as handle:
            handle.write(body)
        shown = herald.json(home, "inbox", "ingest", push, "--webpush", passphrase=None)
        expect(shown == payload, f"herald read {shown}")
        rows = herald.json(home, "inbox", "list", passphrase=None)
        expect([row["amsg"] for row in rows] == ["encrypted by http-ece"], f"inbox list {rows}")
        return "a body http-ece encrypted decrypts and caches in herald inbox ingest --webpush"
    finally:
        server.close()
        service.close()


CHECKS = [
    ("i) webpush: herald's pushes decrypt with http-ece, VAPID verifies with cryptography",
     check_webpush_decrypts_with_http_ece),
    ("i) webpush: an http-ece body decrypts in herald inbox ingest --webpush", check_http_ece_body_decrypts_in_herald),
]
