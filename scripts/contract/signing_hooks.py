"""Schemathesis hooks that sign: without them every generated request to a signed route stops at
the signature check (400/401), and the FeedAccess-guarded reads never answer 200, so their
response schemas would go unchecked.

`map_case` re-signs about two thirds of the schema-valid generated cases with keys this server
knows (a channel added before the run, subscribers seeded by `seed`), keeping generated values
where they fit the field (device tokens, platforms, actions, titles, bodies, settings, sids), so the
server's validation past the signature, its stores and its 200/202 answers are fuzzed too, those of
subscriber control (docs/protocol.md §10: settings, choices, mutes, read marks) included. The rest
are sent as generated. (Bisq's open `GET /relay` is not signed; its cases get a valid device token
instead.) A share of the signed cases carry one deliberate fault (expired, from the
future, another audience, another signer, the high-s twin of the signature) so the §2.3 refusals
are checked against the document as well.

Every choice comes from a random generator seeded by the generated case, so a run is as
reproducible as schemathesis' own `--seed`.

Environment: HERALD_CONTRACT_AUDIENCE (the server's --audience).
`python signing_hooks.py URL` seeds the server (run.sh does, before schemathesis starts);
`--report URL` prints what the server answered, after the run, and fails if the hooks did nothing.
"""

import base64
import hashlib
import json
import os
import random
import re
import sys
import urllib.request
import zlib

from eth_account import Account

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from herald_signing import envelope, feed_access_header, window  # noqa: E402

AUDIENCE = os.environ.get("HERALD_CONTRACT_AUDIENCE", "herald-contract")


def _account(label):
    # Fixed keys, so the channel can be added (by address) before the run and runs are repeatable.
    return Account.from_key(hashlib.sha256(f"herald-contract {label}".encode()).digest())


CHANNEL = _account("channel")
SUBSCRIBERS = [_account(f"subscriber {index}") for index in range(4)]
# Subscribed by `seed` and never unsubscribed by a case (the Subscription cases sign for SUBSCRIBERS), so
# the choices and mutes of docs/protocol.md §10 it signs reach their 200 whatever the cases did before.
CONTROLLER = _account("subscriber control")
OUTSIDER = _account("outsider")  # known to nobody: not a channel, never registered
SIGNED_SHARE = 2 / 3
FAULT_SHARE = 1 / 6
SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def _rng(case):
    seed = json.dumps(
        [case.method, case.path, case.path_parameters, case.query, dict(case.headers or {}), case.body],
        sort_keys=True, default=repr,
    )
    return random.Random(zlib.crc32(seed.encode("utf-8", "surrogatepass")))


def _fresh_account(rng):
    """A wallet never seen before, drawn from the case's generator (so the run stays reproducible)."""
    return Account.from_key((1 + rng.getrandbits(255) % (SECP256K1_ORDER - 1)).to_bytes(32, "big"))


def _generated_string(body, *path):
    """A string the generator put at body[path…], if it put one there."""
    value = body
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value if isinstance(value, str) else None


def _pick(rng, generated, choices):
    """The generated value half the time (when there is one), else a valid choice."""
    return generated if generated is not None and rng.random() < 0.5 else rng.choice(choices)


def _high_s_twin(signature):
    """(r, n − s, v ^ 1): valid ECDSA for the same signer, refused by EIP-2 (docs/protocol.md §2.3)."""
    raw = bytes.fromhex(signature[2:])
    s = SECP256K1_ORDER - int.from_bytes(raw[32:64], "big")
    return "0x" + (raw[:32] + s.to_bytes(32, "big") + bytes([55 - raw[64]])).hex()


def _fault(rng):
    """None most of the time, else one deliberate §2.3 fault for this case."""
    if rng.random() >= FAULT_SHARE:
        return None
    return rng.choice(["expired", "future", "audience", "signer", "high_s"])


def _times(fault):
    issued, expires = window()
    audience = AUDIENCE
    if fault == "expired":
        issued, expires = issued - 7200, issued - 3600
    elif fault == "future":
        issued, expires = issued + 3600, expires + 3600
    elif fault == "audience":
        audience = "someone-else"
    return {"audience": audience, "issuedAt": issued, "expiresAt": expires}


def _sign(rng, case, account, message, primary):
    fault = _fault(rng)
    message = dict(message, nonce=rng.getrandbits(128), **_times(fault))
    scheme = _pick(rng, _generated_string(case.body, "scheme"), ["eip712", "eip191"])
    if scheme not in ("eip712", "eip191"):
        # An unknown scheme cannot be signed; the server must still refuse it with its code.
        scheme, wrong_scheme = rng.choice(["eip712", "eip191"]), scheme
    else:
        wrong_scheme = None
    signed = envelope(account, message, scheme, signer=OUTSIDER if fault == "signer" else account, primary=primary)
    if fault == "high_s":
        signed["signature"] = _high_s_twin(signed["signature"])
    if wrong_scheme is not None:
        signed["scheme"] = wrong_scheme
    case.body = signed
    case.media_type = "application/json"


def _device(rng, case):
    message = case.body.get("message") if isinstance(case.body, dict) else None
    wallet = rng.choice(SUBSCRIBERS + [_fresh_account(rng)])
    platform = _pick(rng, _generated_string(message, "platform"), ["ios", "android"])
    token = _pick(rng, _generated_string(message, "deviceToken"), ["%064x" % rng.getrandbits(256)])
    action = _pick(rng, _generated_string(message, "action"), ["register", "register", "unregister"])
    _sign(rng, case, wallet, {
        "action": action, "wallet": wallet.address, "platform": platform, "deviceToken": token,
    }, "DeviceBinding")


# A P-256 point on the curve (RFC 8291 Appendix A's subscriber key): valid for every subscription.
WEBPUSH_P256DH = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"


def _webpush(rng, case):
    message = case.body.get("message") if isinstance(case.body, dict) else None
    wallet = rng.choice(SUBSCRIBERS + [_fresh_account(rng)])
    endpoint = _pick(rng, _generated_string(message, "endpoint"),
                     ["https://push.example.org/contract/%016x?up=1" % rng.getrandbits(64)])
    p256dh = _pick(rng, _generated_string(message, "p256dh"), [WEBPUSH_P256DH])
    auth = _pick(rng, _generated_string(message, "auth"),
                 [base64.urlsafe_b64encode(rng.getrandbits(128).to_bytes(16, "big")).decode().rstrip("=")])
    action = _pick(rng, _generated_string(message, "action"), ["register", "register", "unregister"])
    _sign(rng, case, wallet, {
        "action": action, "wallet": wallet.address, "endpoint": endpoint, "p256dh": p256dh, "auth": auth,
    }, "WebPushBinding")


def _subscription(rng, case):
    message = case.body.get("message") if isinstance(case.body, dict) else None
    subscriber = rng.choice(SUBSCRIBERS + [_fresh_account(rng)])
    channel = rng.choice([CHANNEL.address] * 3 + [OUTSIDER.address])
    action = _pick(rng, _generated_string(message, "action"), ["subscribe", "subscribe", "unsubscribe"])
    _sign(rng, case, subscriber, {
        "action": action, "channel": channel, "subscriber": subscriber.address,
    }, "Subscription")


def _secret_hex(rng):
    # The ECIES wire shape of docs/protocol.md §5.1 (iv 16, key 33, mac 32, one block): the server stores it
    # opaque, so random bytes of the right length exercise the same path.
    return "%0*x" % (2 * 97, rng.getrandbits(8 * 97))


def payload_for(rng, generated_text, kind=None):
    """A §4.1 payload of `kind` (else a random type), with generated text in its fields when given."""
    text = generated_text if generated_text is not None else "Trade accepted"
    kind = kind or rng.choice(["1", "2", "3", "4"])
    recipients = rng.sample(SUBSCRIBERS, rng.randint(1, len(SUBSCRIBERS)))
    data = {"type": kind, "asub": text[:80], "amsg": text, "acta": "", "aimg": ""}
    payload = {"notification": {"title": text[:80], "body": text[:200]}, "data": data}
    if kind == "3":
        payload["recipients"] = recipients[0].address
    elif kind == "4":
        payload["recipients"] = {account.address: None for account in recipients}
    elif kind == "2":
        payload["recipients"] = {account.address: {"secret": _secret_hex(rng)} for account in recipients}
    return payload


def _notification(rng, case):
    message = case.body.get("message") if isinstance(case.body, dict) else None
    generated = _generated_string(message, "payload")
    if generated is not None and rng.random() < 0.2:
        text = generated  # signed, but whatever the generator made of §4.1
    else:
        text = json.dumps(payload_for(rng, generated), separators=(",", ":"), ensure_ascii=rng.random() < 0.5)
    sender = CHANNEL if rng.random() < 0.9 else OUTSIDER
    _sign(rng, case, sender, {"channel": sender.address, "payload": text}, "Notification")


# docs/protocol.md §10. Every list the channel publishes has the toggle `trades`, the last two also the
# threshold `amount` over at least [0, 1000] (the seed publishes the second): choices of `trades` fit
# whichever list was published last, choices of `amount` fit two of them (else `invalid_settings`).
SETTINGS_LISTS = [
    [{"id": "trades", "kind": "toggle", "default": True}],
    [{"id": "trades", "kind": "toggle", "default": True, "description": "Trade updates"},
     {"id": "amount", "kind": "threshold", "min": 0, "max": 1000, "default": 0}],
    [{"id": "amount", "kind": "threshold", "min": -5, "max": 1000, "default": 10, "description": "Smallest amount"},
     {"id": "trades", "kind": "toggle", "default": False},
     {"id": "news", "kind": "toggle", "default": True, "description": "Announcements"}],
]
SIDS = re.compile(r"([1-9][0-9]*(,[1-9][0-9]*){0,99})?")


def _uint(rng, value):
    """A uint256 field that may also be a JSON integer (docs/protocol.md §2): either spelling, at random."""
    return value if rng.random() < 0.5 else str(value)


def _channel_settings(rng, case):
    message = case.body.get("message") if isinstance(case.body, dict) else None
    generated = _generated_string(message, "settings")
    if generated is not None and rng.random() < 0.2:
        text = generated  # signed, but whatever the generator made of the list (mostly `invalid_settings`)
    else:
        text = json.dumps(rng.choice(SETTINGS_LISTS), separators=(",", ":"))
    sender = CHANNEL if rng.random() < 0.9 else OUTSIDER  # the outsider is no channel: 403
    _sign(rng, case, sender, {"channel": sender.address, "settings": text}, "ChannelSettings")


def _control_subscriber(rng):
    """Mostly the subscriber no case unsubscribes; sometimes one that may not be subscribed (404)."""
    return rng.choice([CONTROLLER] * 4 + SUBSCRIBERS + [_fresh_account(rng)])


def _subscriber_settings(rng, case):
    message = case.body.get("message") if isinstance(case.body, dict) else None
    generated = _generated_string(message, "settings")
    subscriber = _control_subscriber(rng)
    if generated is not None and rng.random() < 0.2:
        text = generated
    else:
        choices = rng.choice([{}, {"trades": rng.random() < 0.5}, {"amount": rng.randint(0, 1000)},
                              {"trades": rng.random() < 0.5, "amount": rng.randint(0, 1000)}])
        text = json.dumps(choices, separators=(",", ":"))
    _sign(rng, case, subscriber, {
        "channel": CHANNEL.address, "subscriber": subscriber.address, "settings": text,
    }, "SubscriberSettings")


def _mute(rng, case):
    subscriber = _control_subscriber(rng)
    message = case.body.get("message") if isinstance(case.body, dict) else None
    generated = message.get("until") if isinstance(message, dict) else None
    if isinstance(generated, str) and re.fullmatch(r"0|[1-9][0-9]{0,77}", generated):
        generated = int(generated)
    if type(generated) is int and 0 <= generated < 2**256 and rng.random() < 0.2:
        until = generated  # most likely not within the ten years ahead: 400 bad_request
    else:
        until = rng.choice([0, window()[0] + 5 + 3600])
    _sign(rng, case, subscriber, {
        "channel": CHANNEL.address, "subscriber": subscriber.address, "until": until,
    }, "Mute")
    case.body["message"]["until"] = _uint(rng, until)


def _read_mark(rng, case):
    message = case.body.get("message") if isinstance(case.body, dict) else None
    wallet = rng.choice(SUBSCRIBERS + [CONTROLLER, _fresh_account(rng)])
    generated = _generated_string(message, "sids")
    if generated is not None and SIDS.fullmatch(generated):
        sids = generated
    elif rng.random() < 0.5:
        sids = ",".join(str(rng.randint(1, 400)) for _ in range(rng.randint(1, 5)))
    else:
        sids = ""
    up_to = rng.choice([0, rng.randint(1, 400)]) if sids else rng.randint(1, 400)
    _sign(rng, case, wallet, {"wallet": wallet.address, "sids": sids, "upTo": up_to}, "ReadMark")
    case.body["message"]["upTo"] = _uint(rng, up_to)


def _delegate(rng, case):
    """Mostly a delegate of the channel among a few (so that removals find one and the limit is seldom
    reached), sometimes a fresh address; now and then the outsider signs as a channel (403)."""
    message = case.body.get("message") if isinstance(case.body, dict) else None
    action = _pick(rng, _generated_string(message, "action"), ["add", "add", "remove"])
    delegate = rng.choice(SUBSCRIBERS[:3] + [_fresh_account(rng)])
    sender = CHANNEL if rng.random() < 0.9 else OUTSIDER
    _sign(rng, case, sender, {"action": action, "channel": sender.address, "delegate": delegate.address},
          "Delegate")


def _webhook(rng, case):
    """Mostly an https URL of the channel's (set), sometimes "" (removed), now and then what was generated
    (mostly invalid_webhook) or a refused address; events a valid subset, or what was generated."""
    message = case.body.get("message") if isinstance(case.body, dict) else None
    roll = rng.random()
    if roll < 0.6:
        url = "https://hooks.example.org/herald/%d" % rng.randint(1, 9)
    elif roll < 0.75:
        url = ""
    elif roll < 0.85:
        url = rng.choice(["https://10.0.0.7/hook", "http://203.0.113.9/hook", "https://user@h.example.org/"])
    else:
        url = _generated_string(message, "url") or "https://h.example.org/x"
    kinds = ["subscribed", "unsubscribed", "failed"]
    events = ",".join(rng.sample(kinds, rng.randint(1, 3))) if rng.random() < 0.85 else (
        _generated_string(message, "events") or "subscribed,subscribed")
    sender = CHANNEL if rng.random() < 0.9 else OUTSIDER
    _sign(rng, case, sender, {"channel": sender.address, "url": url, "events": events}, "Webhook")


def _authorize(rng, case, owner):
    signer = owner if rng.random() < 0.85 else OUTSIDER
    headers = dict(case.headers or {})
    headers["Authorization"] = feed_access_header(signer, AUDIENCE)
    case.headers = headers


def _wallet_read(rng, case):
    owner = rng.choice(SUBSCRIBERS)
    case.path_parameters = dict(case.path_parameters or {}, wallet=owner.address)
    _authorize(rng, case, owner)


def _push_status(rng, case):
    case.path_parameters = dict(case.path_parameters or {}, sid=str(rng.randint(1, 60)))
    _authorize(rng, case, CHANNEL)


def _public_key(rng, case):
    case.path_parameters = dict(case.path_parameters or {}, wallet=rng.choice(SUBSCRIBERS).address)


def _channel(rng, case):
    case.path_parameters = dict(case.path_parameters or {}, channel=CHANNEL.address)


def _bisq_relay(rng, case):
    """A device token of the platform the case asks for (random, so the per-token limit rarely bites):
    without one every generated `GET /relay` stops at the token check and `success` goes unchecked.
    Mostly a message that is the hex of UTF-8 text too (generated hex is seldom valid UTF-8, so how many
    cases got past that check swung with the schema's other paths); now and then the generated one."""
    query = dict(case.query or {})
    android = str(query.get("isAndroid", "")).lower() == "true"
    token = "bisq-contract:%040x" % rng.getrandbits(160) if android else "%064x" % rng.getrandbits(256)
    query["token"] = token.encode().hex()
    if rng.random() < 0.8:
        query["msg"] = ("BisqMessage|%032x" % rng.getrandbits(128)).encode().hex()
    case.query = query


ROUTES = {
    ("POST", "/v1/devices"): _device,
    ("POST", "/v1/webpush"): _webpush,
    ("POST", "/v1/subscriptions"): _subscription,
    ("POST", "/v1/notifications"): _notification,
    ("POST", "/v1/channel-settings"): _channel_settings,
    ("POST", "/v1/subscriber-settings"): _subscriber_settings,
    ("POST", "/v1/mutes"): _mute,
    ("POST", "/v1/read"): _read_mark,
    ("POST", "/v1/delegates"): _delegate,
    ("POST", "/v1/webhooks"): _webhook,
    ("GET", "/v1/users/{wallet}/feeds"): _wallet_read,
    ("GET", "/v1/users/{wallet}/subscriptions"): _wallet_read,
    ("GET", "/v1/notifications/{sid}"): _push_status,
    ("GET", "/v1/users/{wallet}/pubkey"): _public_key,
    ("GET", "/v1/channels/{channel}"): _channel,
    ("GET", "/relay"): _bisq_relay,
}


def _register_hooks():
    import schemathesis

    @schemathesis.hook
    def map_case(context, case):
        route = ROUTES.get((case.method.upper(), case.operation.path))
        if route is None:
            return case
        # A case generated to break the schema (negative mode) is left alone: signing it would mend
        # the parts the server checks and leave schemathesis expecting a refusal of the rest.
        meta = case.meta
        if meta is not None and meta.generation.mode == "negative":
            return case
        rng = _rng(case)
        if rng.random() < SIGNED_SHARE:
            route(rng, case)
        return case


def _post(url, path, body):
    request = urllib.request.Request(
        url + path, data=json.dumps(body).encode("utf-8"), headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.status


def seed(url):
    """Registers and subscribes every subscriber (the controller too), publishes the channel's settings
    and sends one item of each type, so the reads and §10 operations the hooks sign have something to
    work on from the first case on."""
    rng = random.Random(20261122)
    issued, expires = window()
    times = {"audience": AUDIENCE, "issuedAt": issued, "expiresAt": expires}
    for index, account in enumerate(SUBSCRIBERS + [CONTROLLER]):
        binding = dict(times, action="register", wallet=account.address, platform=["ios", "android"][index % 2],
                       deviceToken="%064x" % rng.getrandbits(256), nonce=rng.getrandbits(128))
        _post(url, "/v1/devices", envelope(account, binding, "eip712"))
        subscription = dict(times, action="subscribe", channel=CHANNEL.address, subscriber=account.address,
                            nonce=rng.getrandbits(128))
        _post(url, "/v1/subscriptions", envelope(account, subscription, "eip712", primary="Subscription"))
    settings = dict(times, channel=CHANNEL.address, settings=json.dumps(SETTINGS_LISTS[1]), nonce=rng.getrandbits(128))
    _post(url, "/v1/channel-settings", envelope(CHANNEL, settings, "eip712", primary="ChannelSettings"))
    sent = 0
    for kind in ["1", "2", "3", "4"]:
        payload = payload_for(rng, f"Seeded type {kind}", kind)
        message = dict(times, channel=CHANNEL.address, payload=json.dumps(payload), nonce=rng.getrandbits(128))
        if _post(url, "/v1/notifications", envelope(CHANNEL, message, "eip712", primary="Notification")) == 202:
            sent += 1
    print(f"contract seed: {len(SUBSCRIBERS) + 1} subscribers registered and subscribed, settings published, "
          f"{sent} items sent", file=sys.stderr)


METRIC = re.compile(r'^herald_http_requests_total\{(?P<labels>.*)\} (?P<count>[0-9.]+)$')


def report(url):
    """Prints the server's answers by route and status (from /metrics), and fails unless every route
    the hooks sign answered a success at least once: otherwise the hooks have stopped working (a
    schemathesis upgrade, a changed route) and the stage would only be fuzzing the signature check."""
    with urllib.request.urlopen(url + "/metrics", timeout=10) as answer:
        text = answer.read().decode("utf-8")
    answers = {}
    for line in text.splitlines():
        match = METRIC.match(line)
        if match:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', match["labels"]))
            key = (labels.get("method", "?"), labels.get("route", "?"))
            answers.setdefault(key, {})[labels.get("status", "?")] = int(float(match["count"]))
    print("contract: the server's answers during the run, by route and status:", file=sys.stderr)
    for (method, route), statuses in sorted(answers.items(), key=lambda item: (item[0][1], item[0][0])):
        shown = ", ".join(f"{status} x{count}" for status, count in sorted(statuses.items()))
        print(f"  {method:6} {route:36} {shown}", file=sys.stderr)
    missing = [
        f"{method} {route}" for method, route in ROUTES
        if not any(status.startswith("2") for status in answers.get((method, route), {}))
    ]
    if missing:
        sys.exit("contract: no signed case succeeded on " + ", ".join(missing) + " (are the hooks applied?)")


if __name__ == "__main__":
    if sys.argv[1:] == ["--channel-address"]:
        print(CHANNEL.address)
    elif len(sys.argv) == 3 and sys.argv[1] == "--report":
        report(sys.argv[2])
    elif len(sys.argv) == 2:
        seed(sys.argv[1])
    else:
        sys.exit("usage: signing_hooks.py URL | --report URL | --channel-address")
else:
    _register_hooks()
