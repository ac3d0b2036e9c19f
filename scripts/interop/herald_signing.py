"""Herald's signed operations as eth-account makes them (docs/protocol.md §2.1, §2.2, §3).

Shared by the interoperability check (scripts/interop) and the contract stage's schemathesis hooks
(scripts/contract), so that both sign exactly as the specification says, with a library nobody on
the team wrote. Needs eth-account only.
"""

import base64
import json
import time

from eth_account.messages import encode_defunct, encode_typed_data
from eth_utils import to_checksum_address

CHAIN_ID = 1

# docs/protocol.md §2.1, written as the EIP-712 type strings the specification gives.
DOMAIN = {"name": "Herald", "version": "1", "chainId": CHAIN_ID}
TYPE_STRINGS = [
    "EIP712Domain(string name,string version,uint256 chainId)",
    "DeviceBinding(string action,address wallet,string platform,string deviceToken,string audience,"
    "uint256 nonce,uint256 issuedAt,uint256 expiresAt)",
    "Subscription(string action,address channel,address subscriber,string audience,uint256 nonce,"
    "uint256 issuedAt,uint256 expiresAt)",
    "Notification(address channel,string payload,string audience,uint256 nonce,uint256 issuedAt,"
    "uint256 expiresAt)",
    "FeedAccess(address wallet,string audience,uint256 issuedAt,uint256 expiresAt)",
    "WebPushBinding(string action,address wallet,string endpoint,string p256dh,string auth,string audience,"
    "uint256 nonce,uint256 issuedAt,uint256 expiresAt)",
    # §10, subscriber control.
    "ChannelSettings(address channel,string settings,string audience,uint256 nonce,uint256 issuedAt,"
    "uint256 expiresAt)",
    "SubscriberSettings(address channel,address subscriber,string settings,string audience,uint256 nonce,"
    "uint256 issuedAt,uint256 expiresAt)",
    "Mute(address channel,address subscriber,uint256 until,string audience,uint256 nonce,uint256 issuedAt,"
    "uint256 expiresAt)",
    "ReadMark(address wallet,string sids,uint256 upTo,string audience,uint256 nonce,uint256 issuedAt,"
    "uint256 expiresAt)",
    # §11, senders.
    "Delegate(string action,address channel,address delegate,string audience,uint256 nonce,uint256 issuedAt,"
    "uint256 expiresAt)",
    "Webhook(address channel,string url,string events,string audience,uint256 nonce,uint256 issuedAt,"
    "uint256 expiresAt)",
]


def _fields(type_string):
    """`Name(type field,…)` → (Name, [{"name": field, "type": type}, …]), eth-account's form."""
    name, members = type_string.rstrip(")").split("(")
    return name, [dict(zip(("type", "name"), member.split(" "))) for member in members.split(",")]


EIP712_TYPES = dict(_fields(text) for text in TYPE_STRINGS)


def window():
    """issuedAt a little in the past and expiresAt five minutes ahead: inside every §2.3 time rule."""
    now = int(time.time())
    return now - 5, now + 300


def eip191_text(message, primary="DeviceBinding"):
    """docs/protocol.md §2.2: `Herald <PrimaryType>`, then one `name: value` line per field in type order."""
    lines = [f"Herald {primary}"]
    for field in EIP712_TYPES[primary]:
        value = message[field["name"]]
        if field["type"] == "address":
            value = to_checksum_address(value)
        lines.append(f"{field['name']}: {value}")
    lines.append(f"chainId: {CHAIN_ID}")
    return "\n".join(lines)


def sign(account, message, scheme, primary="DeviceBinding"):
    if scheme == "eip712":
        # Only the primary type and the domain: eth-account rejects types the message does not use.
        types = {"EIP712Domain": EIP712_TYPES["EIP712Domain"], primary: EIP712_TYPES[primary]}
        signable = encode_typed_data(
            full_message={"types": types, "primaryType": primary, "domain": DOMAIN, "message": message}
        )
    else:
        signable = encode_defunct(text=eip191_text(message, primary))
    return "0x" + bytes(account.sign_message(signable).signature).hex()


def envelope(account, message, scheme, signer=None, primary="DeviceBinding"):
    """The wire envelope: uint256 nonce as a decimal string, the times as JSON integers."""
    wire = dict(message, nonce=str(message["nonce"])) if "nonce" in message else dict(message)
    return {"scheme": scheme, "message": wire, "signature": sign(signer or account, message, scheme, primary)}


def feed_access_header(account, audience):
    """`Authorization: Herald <base64url, no padding, of the FeedAccess envelope>` (docs/protocol.md §3)."""
    issued, expires = window()
    message = {"wallet": account.address, "audience": audience, "issuedAt": issued, "expiresAt": expires}
    body = json.dumps(envelope(account, message, "eip712", primary="FeedAccess")).encode("utf-8")
    return "Herald " + base64.urlsafe_b64encode(body).decode("ascii").rstrip("=")
