#!/usr/bin/env python3
# Writes the `webpush` fuzz target's seeds into Fuzz/Corpus/webpush (python3-cryptography): three Web Push
# bodies encrypted (RFC 8291 aes128gcm) for the target's fixed subscription (private key 32 × 0x42, auth
# 16 × 0x24), so the fuzzer starts past the decryption, checked first against the RFC's own vector;
# then a subscription, a WebPushBinding envelope, endpoints, addresses and networks as text.
# Run from the repository root: python3 scripts/fuzz/webpush-seeds.py
import base64, hmac, hashlib, json, os
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

def b64d(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
def b64e(b): return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def hkdf(salt, ikm, info, n):
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    return hmac.new(prk, info + b"\x01", hashlib.sha256).digest()[:n]
def pub(k): return k.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
def priv(raw): return ec.derive_private_key(int.from_bytes(raw, "big"), ec.SECP256R1())

def encrypt(plaintext, ua_public, auth, sender, salt, rs=4096):
    peer = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), ua_public)
    secret = sender.exchange(ec.ECDH(), peer)
    as_public = pub(sender)
    ikm = hkdf(auth, secret, b"WebPush: info\x00" + ua_public + as_public, 32)
    cek = hkdf(salt, ikm, b"Content-Encoding: aes128gcm\x00", 16)
    nonce = hkdf(salt, ikm, b"Content-Encoding: nonce\x00", 12)
    sealed = AESGCM(cek).encrypt(nonce, plaintext + b"\x02", None)
    return salt + rs.to_bytes(4, "big") + bytes([65]) + as_public + sealed

v = json.load(open("Tests/HeraldCoreTests/Vectors/webpush.json"))["cases"][0]
body = encrypt(v["plaintext"].encode(), b64d(v["ua_public"]), b64d(v["auth"]), priv(b64d(v["as_private"])), b64d(v["salt"]))
assert b64e(body) == v["body"], "the RFC 8291 vector does not match"

subscriber = priv(bytes([0x42] * 32))
auth = bytes([0x24] * 16)
def compact(o): return json.dumps(o, separators=(",", ":"), ensure_ascii=False).encode()
bodies = [
    {"notification": {"title": "Trade accepted", "body": "Pay 0.1 ETH"},
     "data": {"type": "3", "sid": "42", "epoch": "1763769600000", "app": "Desk", "icon": "https://d.example/i.png",
              "url": "https://d.example", "secret": "", "asub": "Offer 17", "amsg": "Pay 0.1 ETH", "acta": "", "aimg": ""}},
    {"notification": {"title": "Herald", "body": "Notifications are on"}, "data": {"type": "setup"}},
    {"notification": {"title": "New message", "body": "Open Herald to read it."},
     "data": {"type": "2", "sid": "7", "epoch": "1763769600000"}},
]
out = "Fuzz/Corpus/webpush"
seeds = []
for payload in bodies:
    seeds.append(encrypt(compact(payload), pub(subscriber), auth, ec.generate_private_key(ec.SECP256R1()), os.urandom(16)))
ua = b64e(pub(subscriber)); au = b64e(auth)
seeds.append(compact({"endpoint": "https://push.example.org/up/abc?up=1", "expirationTime": None,
                      "keys": {"p256dh": ua, "auth": au}}))
seeds.append(compact({"scheme": "eip712", "message": {"action": "register",
    "wallet": "0x3f243FdacE01Cfd9719f7359c94BA11361f32471", "endpoint": "https://[2001:db8::1]:8443/p?up=1",
    "p256dh": ua, "auth": au, "audience": "fuzz", "nonce": "42", "issuedAt": 1763769600, "expiresAt": "1763769900"},
    "signature": "0x" + "11" * 32 + "22" * 32 + "1b"}))
for text in ["https://127.0.0.1:8443/push/1", "https://[::ffff:169.254.169.254]/p", "::ffff:10.0.0.0/104", "fe80::1%eth0",
             "192.168.1.0/24", ua]:
    seeds.append(text.encode())
for i, seed in enumerate(seeds):
    open(f"{out}/seed-{i}", "wb").write(seed)
print(len(seeds), "seeds")
