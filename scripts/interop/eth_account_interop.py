#!/usr/bin/env python3
"""Interoperability of Herald with eth-account (the Python reference).

Usage: eth_account_interop.py HERALD_BINARY

Keystores: every check drives the real binary in a throwaway --home and compares with
eth-account. Signed operations: one `herald serve` on a free port and a throwaway database
must accept DeviceBinding, Subscription, Notification and FeedAccess operations, and §10's
ChannelSettings, SubscriberSettings, Mute and ReadMark, and §11.1's Delegate and a delegate's Notification,
that eth-account signed (EIP-712 and EIP-191).
Prints one line per check, then `N passed, M failed`; exits 1 if anything failed.
Needs eth-account only (scripts/interop/run.sh installs it in a temporary venv); the Bisq checks
use the pycryptodome it depends on.
"""

import json
import os
import queue
import re
import secrets
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import unicodedata
import urllib.error
import urllib.request

from eth_account import Account
from eth_account.messages import encode_defunct
from eth_keys import keys

import bisq_interop
import webpush_interop
from herald_signing import CHAIN_ID, DOMAIN, envelope, feed_access_header, window
from interop_checks import CheckFailed, expect

# Non-ASCII on purpose: both sides must hash the same UTF-8 bytes.
PASSPHRASE = "pässwörd ✓"
# The same text in NFD (a + combining diaeresis): different bytes, so a different passphrase.
PASSPHRASE_NFD = unicodedata.normalize("NFD", PASSPHRASE)

EXIT_OK, EXIT_WRONG_PASSPHRASE, EXIT_USAGE, EXIT_BAD_INPUT = 0, 2, 64, 65
COMMAND_TIMEOUT = 120

AUDIENCE = "herald-interop"
SERVER_START_TIMEOUT = 30
SERVER_STOP_TIMEOUT = 10
HTTP_TIMEOUT = 10
LISTENING = re.compile(r"herald listening on http://127\.0\.0\.1:(\d+) ")

def hex_key(key_bytes):
    return "0x" + bytes(key_bytes).hex()


class Herald:
    def __init__(self, binary, scratch):
        self.binary = binary
        self.scratch = scratch
        self.homes = 0
        self.server = Server(binary, scratch)

    def new_home(self):
        self.homes += 1
        return os.path.join(self.scratch, f"home-{self.homes}")

    def run(self, home, *args, passphrase=PASSPHRASE, passphrase_file=None, expect_rc=EXIT_OK):
        """Runs `herald ARGS --home HOME`; the passphrase goes in HERALD_PASSPHRASE unless a file is given."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
        command = [self.binary, *args, "--home", home]
        if passphrase_file is not None:
            command += ["--passphrase-file", passphrase_file]
        elif passphrase is not None:
            env["HERALD_PASSPHRASE"] = passphrase
        result = subprocess.run(
            command, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=COMMAND_TIMEOUT
        )
        stdout = result.stdout.decode("utf-8", "replace")
        stderr = result.stderr.decode("utf-8", "replace").strip()
        if expect_rc is not None and result.returncode != expect_rc:
            shown = " ".join(args)
            raise CheckFailed(
                f"`herald {shown}` exited {result.returncode}, expected {expect_rc}; stderr: {stderr or '(empty)'}"
            )
        return result.returncode, stdout, stderr

    def json(self, home, *args, **kwargs):
        _, stdout, _ = self.run(home, *args, "--json", **kwargs)
        try:
            return json.loads(stdout)
        except ValueError as error:
            raise CheckFailed(f"`herald {' '.join(args)} --json` printed no JSON ({error}): {stdout[:200]!r}")

    def address(self, home, name):
        _, stdout, _ = self.run(home, "wallet", "address", name, passphrase=None)
        return stdout.strip()

    def export(self, home, name):
        _, stdout, _ = self.run(home, "wallet", "export", name, passphrase=None)
        try:
            return json.loads(stdout)
        except ValueError as error:
            raise CheckFailed(f"`herald wallet export {name}` is not JSON ({error})")

    def private_key(self, home, name, **kwargs):
        _, stdout, _ = self.run(home, "wallet", "export", name, "--show-private-key", **kwargs)
        return stdout.strip()


class Server:
    """One `herald serve` for the signed-operation checks: started on first use, stopped by the
    SIGTERM check (or killed by `close` if that never ran)."""

    def __init__(self, binary, scratch):
        self.binary = binary
        self.scratch = scratch
        self.process = None
        self.port = None
        self.start_error = None
        self.lines = queue.Queue()
        self.stderr_path = os.path.join(scratch, "serve.stderr")
        # What the signed-operation checks share: the eth-account signer and its binding.
        self.account = Account.create()
        self.device_token = secrets.token_hex(32)
        self.registered_body = None
        self.registered_answer = None
        self.registered_message = None
        self.last_headers = {}

    def url(self):
        if self.port is None:
            self.start()
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        if self.start_error is not None:
            raise CheckFailed(f"herald serve did not start: {self.start_error}")
        try:
            self._start()
        except Exception as error:  # remembered, so later checks fail at once instead of waiting again
            self.start_error = str(error) if isinstance(error, CheckFailed) else f"{type(error).__name__}: {error}"
            self.close()
            raise CheckFailed(self.start_error)

    def _start(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
        command = [
            self.binary, "serve", "--port", "0",
            "--database", os.path.join(self.scratch, "herald.sqlite"),
            "--audience", AUDIENCE, "--rate-limit", "0", "--log-level", "warning",
            # The webhook check's receiver listens on loopback (docs/protocol.md §11.3).
            "--webhooks-allow-network", "127.0.0.1/32",
        ]
        with open(self.stderr_path, "wb") as stderr:
            self.process = subprocess.Popen(
                command, env=env, cwd=self.scratch, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=stderr,
            )
        # A reader thread keeps draining stdout, so the server never blocks on a full pipe.
        threading.Thread(target=self._read_stdout, daemon=True).start()
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CheckFailed(f"no `herald listening on …` line within {SERVER_START_TIMEOUT} s{self.stderr_tail()}")
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                self.process.wait(timeout=SERVER_STOP_TIMEOUT)
                raise CheckFailed(f"exited {self.process.returncode} before listening{self.stderr_tail()}")
            match = LISTENING.match(line)
            if match:
                self.port = int(match.group(1))
                return

    def _read_stdout(self):
        for raw in self.process.stdout:
            self.lines.put(raw.decode("utf-8", "replace").rstrip("\n"))
        self.lines.put(None)

    def stderr_tail(self):
        try:
            with open(self.stderr_path, encoding="utf-8", errors="replace") as handle:
                text = handle.read().strip()
        except OSError:
            return ""
        return f"; stderr: {text[-500:]}" if text else ""

    def terminate(self):
        """SIGTERM; returns (exit code, seconds) or raises CheckFailed if it outlives the timeout."""
        if self.port is None:
            self.start()  # raises if it never started: nothing to drain then
        if self.process.poll() is not None:
            raise CheckFailed(f"exited {self.process.returncode} before the SIGTERM{self.stderr_tail()}")
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=SERVER_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise CheckFailed(f"still running {SERVER_STOP_TIMEOUT} s after SIGTERM{self.stderr_tail()}")
        return code, time.monotonic() - started

    def close(self):
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def request(self, method, path, body=None, headers=None):
        """Returns (status, JSON body); an HTTP error status is an answer, not an exception. The answer's
        headers are kept in `last_headers`."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.url() + path, data=data, method=method, headers=headers or {})
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
                status, raw, self.last_headers = response.status, response.read(), response.headers
        except urllib.error.HTTPError as error:
            status, raw, self.last_headers = error.code, error.read(), error.headers
        try:
            return status, json.loads(raw)
        except ValueError:
            raise CheckFailed(f"{method} {path} answered {status} with no JSON: {raw[:200]!r}")

    def post_device(self, body, expect_status):
        status, answer = self.request("POST", "/v1/devices", body)
        expect(status == expect_status, f"POST /v1/devices answered {status}, expected {expect_status}: {answer}")
        return answer


def write_file(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def eth_address_of_keystore(keystore, passphrase):
    """Decrypts with eth-account and returns (key hex, checksummed address)."""
    try:
        key = Account.decrypt(keystore, passphrase)
    except ValueError as error:
        raise CheckFailed(f"eth-account cannot decrypt Herald's keystore: {error}")
    return hex_key(key), Account.from_key(key).address


def check_keystore_shape(keystore, address, kdfparams):
    """The Web3 Secret Storage v3 layout geth writes."""
    expect(keystore.get("version") == 3, f"version is {keystore.get('version')!r}, not 3")
    crypto = keystore.get("crypto")
    expect(isinstance(crypto, dict), "no crypto object")
    expect(crypto.get("cipher") == "aes-128-ctr", f"cipher is {crypto.get('cipher')!r}")
    expect(crypto.get("kdf") == "scrypt", f"kdf is {crypto.get('kdf')!r}")
    params = crypto.get("kdfparams", {})
    for field, wanted in kdfparams.items():
        expect(params.get(field) == wanted, f"kdfparams.{field} is {params.get(field)!r}, not {wanted}")
    expect(re.fullmatch(r"[0-9a-f]{64}", params.get("salt", "")), "kdfparams.salt is not 32 bytes of hex")
    expect(re.fullmatch(r"[0-9a-f]{32}", crypto.get("cipherparams", {}).get("iv", "")), "cipherparams.iv is not 16 bytes")
    expect(re.fullmatch(r"[0-9a-f]{64}", crypto.get("ciphertext", "")), "ciphertext is not 32 bytes of hex")
    expect(re.fullmatch(r"[0-9a-f]{64}", crypto.get("mac", "")), "mac is not 32 bytes of hex")
    expect(keystore.get("address") == address[2:].lower(), f"address field {keystore.get('address')!r} != {address}")
    expect(
        re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", keystore.get("id", "")),
        f"id {keystore.get('id')!r} is not a lowercase UUIDv4",
    )


# ---------------------------------------------------------------------------------------------
# Checks. Each returns a short detail string for the PASS line or raises CheckFailed.


def check_create_default(herald, scratch):
    home = herald.new_home()
    created = herald.json(home, "wallet", "create", "--name", "main")
    address = herald.address(home, "main")
    expect(address == created["address"], f"`wallet address` {address} != create's {created['address']}")
    _, eth_address = eth_address_of_keystore(herald.export(home, "main"), PASSPHRASE)
    expect(eth_address == address, f"eth-account decrypts to {eth_address}, herald says {address}")
    return address


def check_default_fields(herald, scratch):
    home = herald.new_home()
    # Reuses nothing from the check above so that it stands alone; --light would defeat the point.
    created = herald.json(home, "wallet", "create", "--name", "fields")
    exported = herald.export(home, "fields")
    check_keystore_shape(exported, created["address"], {"n": 262144, "r": 8, "p": 1, "dklen": 32})
    # The export is the stored file, byte for byte; the file and folder are private, named as geth does.
    path = created["file"]
    with open(path, encoding="utf-8") as handle:
        expect(json.loads(handle.read()) == exported, "export differs from the stored file")
    expect(stat.S_IMODE(os.stat(path).st_mode) == 0o600, f"file mode {oct(os.stat(path).st_mode)} is not 0600")
    folder = os.path.dirname(path)
    expect(stat.S_IMODE(os.stat(folder).st_mode) == 0o700, "keystore folder mode is not 0700")
    name = os.path.basename(path)
    pattern = r"UTC--\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{9}Z--" + created["address"][2:].lower()
    expect(re.fullmatch(pattern, name), f"file name {name} is not geth's UTC--<time>--<address>")
    return "v3, aes-128-ctr, scrypt n=262144 r=8 p=1 dklen=32; file 0600 in 0700, geth name"


def check_create_light(herald, scratch):
    home = herald.new_home()
    created = herald.json(home, "wallet", "create", "--light", "--name", "light")
    exported = herald.export(home, "light")
    check_keystore_shape(exported, created["address"], {"n": 4096, "r": 8, "p": 6, "dklen": 32})
    key, eth_address = eth_address_of_keystore(exported, PASSPHRASE)
    address = herald.address(home, "light")
    expect(eth_address == address, f"eth-account decrypts to {eth_address}, herald says {address}")
    shown = herald.private_key(home, "light")
    expect(shown == key, "`export --show-private-key` differs from the key eth-account decrypted")
    return f"{address}, n=4096 p=6, --show-private-key agrees"


def import_eth_keystore(herald, scratch, kdf):
    home = herald.new_home()
    account = Account.create()
    keystore = Account.encrypt(account.key, PASSPHRASE, kdf=kdf)
    path = write_file(scratch, f"eth-{kdf}.json", json.dumps(keystore))
    imported = herald.json(home, "wallet", "import", "--keystore", path, "--name", f"from-{kdf}")
    address = herald.address(home, f"from-{kdf}")
    expect(address == account.address, f"herald says {address}, eth-account made {account.address}")
    expect(imported["address"] == account.address, f"import reported {imported['address']}")
    shown = herald.private_key(home, f"from-{kdf}")
    expect(shown == hex_key(account.key), "`export --show-private-key` is not the key eth-account encrypted")
    return home, account, f"from-{kdf}"


def check_import_scrypt(herald, scratch):
    _, account, _ = import_eth_keystore(herald, scratch, "scrypt")
    return f"{account.address}, --show-private-key agrees"


def check_import_pbkdf2(herald, scratch):
    home, account, name = import_eth_keystore(herald, scratch, "pbkdf2")
    # Herald re-encrypts with its own scrypt setting; that copy must still open in eth-account.
    exported = herald.export(home, name)
    expect(exported["crypto"]["kdf"] == "scrypt", "the stored copy is not re-encrypted with scrypt")
    key, _ = eth_address_of_keystore(exported, PASSPHRASE)
    expect(key == hex_key(account.key), "eth-account decrypts Herald's re-encrypted copy to another key")
    return f"{account.address}, --show-private-key agrees, re-encrypted copy opens in eth-account"


def check_import_wrong_passphrase(herald, scratch):
    home = herald.new_home()
    account = Account.create()
    # A cheap KDF: this check is about the exit code, not the cost.
    keystore = Account.encrypt(account.key, PASSPHRASE, kdf="scrypt", iterations=4096)
    path = write_file(scratch, "wrong-passphrase.json", json.dumps(keystore))
    _, _, stderr = herald.run(
        home, "wallet", "import", "--keystore", path, "--name", "nope",
        passphrase="not the passphrase", expect_rc=EXIT_WRONG_PASSPHRASE,
    )
    expect("passphrase" in stderr, f"stderr does not mention the passphrase: {stderr!r}")
    listed = herald.json(home, "wallet", "list", passphrase=None)
    expect(listed == [], f"a wallet was stored anyway: {listed}")
    return f"exit 2, nothing stored ({stderr})"


def check_import_truncated(herald, scratch):
    home = herald.new_home()
    keystore = Account.encrypt(Account.create().key, PASSPHRASE, kdf="scrypt", iterations=4096)
    text = json.dumps(keystore)
    path = write_file(scratch, "truncated.json", text[: len(text) // 2])
    _, _, stderr = herald.run(
        home, "wallet", "import", "--keystore", path, "--name", "cut", expect_rc=EXIT_BAD_INPUT
    )
    return f"exit 65 ({stderr})"


def check_import_over_cap(herald, scratch):
    home = herald.new_home()
    keystore = Account.encrypt(Account.create().key, PASSPHRASE, kdf="scrypt", iterations=4096)
    keystore["crypto"]["kdfparams"]["n"] = 1 << 30  # 128 GiB of scrypt if anyone tried
    path = write_file(scratch, "over-cap.json", json.dumps(keystore))
    started = time.monotonic()
    _, _, stderr = herald.run(
        home, "wallet", "import", "--keystore", path, "--name", "huge", expect_rc=EXIT_BAD_INPUT
    )
    elapsed = time.monotonic() - started
    expect(elapsed < 5, f"refusal took {elapsed:.1f} s: derivation was attempted")
    return f"exit 65 in {elapsed:.2f} s ({stderr})"


def check_import_private_key(herald, scratch):
    home = herald.new_home()
    account = Account.create()
    # 0x prefix and a trailing newline, as `echo 0x… > key` leaves it.
    path = write_file(scratch, "key.hex", hex_key(account.key) + "\n")
    herald.run(home, "wallet", "import", "--private-key-file", path, "--name", "raw")
    address = herald.address(home, "raw")
    expect(address == account.address, f"herald says {address}, eth-account says {account.address}")
    _, eth_address = eth_address_of_keystore(herald.export(home, "raw"), PASSPHRASE)
    expect(eth_address == account.address, f"eth-account decrypts Herald's keystore to {eth_address}")
    return address


def check_import_private_key_leading_zero(herald, scratch):
    home = herald.new_home()
    key = b"\x00" + os.urandom(31)  # below n and non-zero with overwhelming probability
    account = Account.from_key(key)
    path = write_file(scratch, "key-zero.hex", key.hex())  # no 0x, no newline
    herald.run(home, "wallet", "import", "--private-key-file", path, "--name", "zero", "--light")
    address = herald.address(home, "zero")
    expect(address == account.address, f"herald says {address}, eth-account says {account.address}")
    shown = herald.private_key(home, "zero")
    expect(shown == hex_key(key), f"--show-private-key gives {len(shown) - 2} digits, not the padded key")
    return f"{address}, key 0x00… printed as 64 digits"


def check_passphrase_bytes_not_normalised(herald, scratch):
    home = herald.new_home()
    account = Account.create()
    keystore = Account.encrypt(account.key, PASSPHRASE_NFD, kdf="scrypt", iterations=4096)
    path = write_file(scratch, "nfd.json", json.dumps(keystore))
    passphrase_file = write_file(scratch, "nfd.pass", PASSPHRASE_NFD + "\n")  # one trailing newline dropped
    # The NFC spelling is a different byte string: a wrong passphrase, not "close enough".
    herald.run(
        home, "wallet", "import", "--keystore", path, "--name", "nfd", "--light",
        passphrase=PASSPHRASE, expect_rc=EXIT_WRONG_PASSPHRASE,
    )
    herald.run(home, "wallet", "import", "--keystore", path, "--name", "nfd", "--light", passphrase_file=passphrase_file)
    expect(herald.address(home, "nfd") == account.address, "imported under another address")
    key, _ = eth_address_of_keystore(herald.export(home, "nfd"), PASSPHRASE_NFD)
    expect(key == hex_key(account.key), "eth-account decrypts Herald's copy to another key")
    return "NFC refused with exit 2; NFD bytes from --passphrase-file open it; copy opens in eth-account"


# ---------------------------------------------------------------------------------------------
# Signed operations against `herald serve`: eth-account signs, the server must accept.


def device_binding(account, action, token, nonce=None):
    """A DeviceBinding message (docs/protocol.md §2.1) with integer fields, as eth-account signs it."""
    now = int(time.time())
    return {
        "action": action,
        "wallet": account.address,
        "platform": "ios",
        "deviceToken": token,
        "audience": AUDIENCE,
        "nonce": secrets.randbits(128) if nonce is None else nonce,
        "issuedAt": now - 5,
        "expiresAt": now + 300,
    }


def check_serve_info(herald, scratch):
    status, info = herald.server.request("GET", "/v1/info")
    expect(status == 200, f"GET /v1/info answered {status}: {info}")
    expect(info.get("audience") == AUDIENCE, f"audience is {info.get('audience')!r}")
    expect(info.get("chainId") == CHAIN_ID, f"chainId is {info.get('chainId')!r}")
    expect(info.get("domain") == DOMAIN, f"domain is {info.get('domain')!r}")
    return f"port {herald.server.port}, audience {AUDIENCE}, domain {json.dumps(DOMAIN)}"


def check_serve_eip712_register(herald, scratch):
    server = herald.server
    message = device_binding(server.account, "register", server.device_token)
    body = envelope(server.account, message, "eip712")
    answer = server.post_device(body, 200)
    expect(answer.get("status") == "registered", f"status is {answer.get('status')!r}: {answer}")
    expect(server.last_headers.get("Idempotent-Replay") is None, "a first answer marked Idempotent-Replay")
    expect(answer.get("wallet") == server.account.address, f"wallet is {answer.get('wallet')!r}, not {server.account.address}")
    expect(answer.get("deviceToken") == server.device_token, f"deviceToken is {answer.get('deviceToken')!r}")
    server.registered_body = body
    server.registered_answer = answer
    server.registered_message = message
    return f"{server.account.address} registered, nonce {body['message']['nonce']}"


def check_serve_eip712_replay(herald, scratch):
    """docs/protocol.md §11.2: the same body again is answered its first answer, marked; the same message
    signed by eth-account under EIP-191 is another operation with a spent nonce."""
    server = herald.server
    expect(server.registered_body is not None, "no accepted register to replay (the check above failed)")
    answer = server.post_device(server.registered_body, 200)
    expect(answer == server.registered_answer, f"the copy answered {answer}, the first {server.registered_answer}")
    marked = server.last_headers.get("Idempotent-Replay")
    expect(marked == "true", f"Idempotent-Replay is {marked!r}")
    other_scheme = envelope(server.account, server.registered_message, "eip191")
    refused = server.post_device(other_scheme, 409)
    code = refused.get("error", {}).get("code")
    expect(code == "replayed", f"error code is {code!r}: {refused}")
    return "the same body: 200, its first answer, Idempotent-Replay: true; under EIP-191: 409 replayed"


def check_serve_eip191_unregister(herald, scratch):
    server = herald.server
    message = device_binding(server.account, "unregister", server.device_token)
    answer = server.post_device(envelope(server.account, message, "eip191"), 200)
    expect(answer.get("status") == "unregistered", f"status is {answer.get('status')!r}: {answer}")
    expect(answer.get("wallet") == server.account.address, f"wallet is {answer.get('wallet')!r}")
    return "200 unregistered"


def expected_public_key(account):
    return "0x04" + keys.PrivateKey(bytes(account.key)).public_key.to_bytes().hex()


def check_pubkey(server, account):
    status, answer = server.request("GET", f"/v1/users/{account.address}/pubkey")
    expect(status == 200, f"GET /v1/users/…/pubkey answered {status}: {answer}")
    wanted = expected_public_key(account)
    expect(answer.get("publicKey") == wanted, f"publicKey is {answer.get('publicKey')!r}, eth-account's is {wanted}")
    return wanted


def check_serve_pubkey(herald, scratch):
    wanted = check_pubkey(herald.server, herald.server.account)
    return f"{wanted[:14]}…{wanted[-6:]}"


def check_serve_signature_mismatch(herald, scratch):
    server = herald.server
    other = Account.create()
    message = device_binding(server.account, "register", server.device_token)
    answer = server.post_device(envelope(server.account, message, "eip712", signer=other), 401)
    code = answer.get("error", {}).get("code")
    expect(code == "signature_mismatch", f"error code is {code!r}: {answer}")
    # A refused operation must not touch the wallet's recorded public key.
    check_pubkey(server, server.account)
    return "401 signature_mismatch; the wallet's public key is unchanged"


def notification(channel, payload):
    issued, expires = window()
    return {
        "channel": channel.address, "payload": json.dumps(payload, separators=(",", ":")), "audience": AUDIENCE,
        "nonce": secrets.randbits(128), "issuedAt": issued, "expiresAt": expires,
    }


def check_serve_notifications(herald, scratch):
    server = herald.server
    channel, subscriber = Account.create(), Account.create()
    targeted = {
        "notification": {"title": "Trade accepted", "body": "Offer 17"},
        "data": {"type": "3", "asub": "Offer 17", "amsg": "Pay within 2 h"},
        "recipients": subscriber.address,
    }
    status, answer = server.request(
        "POST", "/v1/notifications", envelope(channel, notification(channel, targeted), "eip712", primary="Notification"))
    expect(status == 403 and answer.get("error", {}).get("code") == "forbidden", f"unknown channel: {status} {answer}")

    database = os.path.join(scratch, "herald.sqlite")
    herald.run(herald.new_home(), "channel", "add", channel.address, "--name", "Interop", "--database", database)
    issued, expires = window()
    subscription = {
        "action": "subscribe", "channel": channel.address, "subscriber": subscriber.address, "audience": AUDIENCE,
        "nonce": secrets.randbits(128), "issuedAt": issued, "expiresAt": expires,
    }
    status, answer = server.request(
        "POST", "/v1/subscriptions", envelope(subscriber, subscription, "eip712", primary="Subscription"))
    expect(status == 200 and answer.get("status") == "subscribed", f"subscribe: {status} {answer}")

    status, answer = server.request(
        "POST", "/v1/notifications", envelope(channel, notification(channel, targeted), "eip712", primary="Notification"))
    expect(status == 202 and answer.get("recipients") == 1, f"EIP-712 notification: {status} {answer}")
    subset = dict(targeted, data=dict(targeted["data"], type="4"), recipients={subscriber.address: None})
    status, answer = server.request(
        "POST", "/v1/notifications", envelope(channel, notification(channel, subset), "eip191", primary="Notification"))
    expect(status == 202 and answer.get("recipients") == 1, f"EIP-191 notification: {status} {answer}")

    path = f"/v1/users/{subscriber.address}/feeds?limit=10"
    status, feed = server.request("GET", path, headers={"Authorization": feed_access_header(subscriber, AUDIENCE)})
    expect(status == 200, f"GET feeds answered {status}: {feed}")
    expect(feed.get("itemcount") == 2, f"itemcount is {feed.get('itemcount')!r}")
    first = feed["feeds"][0]
    data = first["payload"]["data"]
    expect(first["sender"] == channel.address, f"sender is {first['sender']!r}, not {channel.address}")
    expect(data["type"] == "4" and data["amsg"] == "Pay within 2 h" and data["app"] == "Interop", f"newest item {data}")
    expect(all(isinstance(value, str) for value in data.values()), f"a data value is not a string: {data}")
    expect(first["epoch"] == data["epoch"], "epoch differs between the item and its payload")
    status, other = server.request("GET", path, headers={"Authorization": feed_access_header(channel, AUDIENCE)})
    expect(status == 401, f"another wallet's FeedAccess answered {status}: {other}")
    return "403 for an unknown channel; subscribe 200; EIP-712 and EIP-191 notifications 202; feeds read with an eth-account FeedAccess"


def signed(account, message, scheme, primary):
    """A §10 operation with a fresh nonce and a valid window, as eth-account signs it."""
    issued, expires = window()
    full = dict(message, audience=AUDIENCE, nonce=secrets.randbits(128), issuedAt=issued, expiresAt=expires)
    return envelope(account, full, scheme, primary=primary)


def check_serve_subscriber_control(herald, scratch):
    """docs/protocol.md §10 signed by eth-account: settings, a choice, a mute and a read mark, both schemes."""
    server = herald.server
    channel, subscriber = Account.create(), Account.create()
    database = os.path.join(scratch, "herald.sqlite")
    herald.run(herald.new_home(), "channel", "add", channel.address, "--name", "Control", "--database", database)
    settings = [
        {"id": "news", "kind": "toggle", "default": True, "description": "Announcements"},
        {"id": "min", "kind": "threshold", "min": 0, "max": 100, "default": 10, "description": "Smallest trade"},
    ]
    status, answer = server.request("POST", "/v1/channel-settings", signed(
        channel, {"channel": channel.address, "settings": json.dumps(settings)}, "eip712", "ChannelSettings"))
    expect(status == 200 and answer.get("settings") == settings, f"ChannelSettings: {status} {answer}")
    subscription = {"action": "subscribe", "channel": channel.address, "subscriber": subscriber.address}
    status, answer = server.request("POST", "/v1/subscriptions", signed(subscriber, subscription, "eip191", "Subscription"))
    expect(status == 200, f"subscribe: {status} {answer}")
    choice = {"channel": channel.address, "subscriber": subscriber.address, "settings": '{"news":false}'}
    status, answer = server.request(
        "POST", "/v1/subscriber-settings", signed(subscriber, choice, "eip191", "SubscriberSettings"))
    expect(status == 200 and answer.get("settings") == {"news": False, "min": 10},
           f"SubscriberSettings: {status} {answer}")

    def send(setting):
        payload = {
            "notification": {"title": "Update", "body": "Filtered or not"},
            "data": {"type": "3", "amsg": "x"}, "recipients": subscriber.address, "setting": setting,
        }
        return server.request("POST", "/v1/notifications",
                              envelope(channel, notification(channel, payload), "eip712", primary="Notification"))

    server.post_device(envelope(subscriber, device_binding(subscriber, "register", secrets.token_hex(32)), "eip712"), 200)

    status, answer = send({"id": "news"})
    expect(status == 202 and answer.get("filtered") == 1 and answer.get("recipients") == 0,
           f"a send the subscriber opted out of: {status} {answer}")
    status, answer = send({"id": "min", "value": 50})
    expect(status == 202 and answer.get("recipients") == 1 and answer.get("pushes") == 1,
           f"a send above the subscriber's threshold: {status} {answer}")
    until = int(time.time()) + 3600
    mute = {"channel": channel.address, "subscriber": subscriber.address, "until": until}
    status, answer = server.request("POST", "/v1/mutes", signed(subscriber, mute, "eip712", "Mute"))
    expect(status == 200 and answer.get("mutedUntil") == until, f"Mute: {status} {answer}")
    status, answer = send({"id": "min", "value": 50})
    expect(status == 202 and answer.get("recipients") == 1 and answer.get("pushes") == 0 and answer.get("filtered") == 0,
           f"a send to a muted subscriber: {status} {answer}")
    sid = answer["sid"][0]

    path = f"/v1/users/{subscriber.address}/feeds?limit=10"
    status, feed = server.request("GET", path, headers={"Authorization": feed_access_header(subscriber, AUDIENCE)})
    expect(status == 200 and feed.get("unread") == 2 and feed["feeds"][0].get("read") is False, f"feed: {feed}")
    mark = {"wallet": subscriber.address, "sids": "", "upTo": int(sid)}
    status, answer = server.request("POST", "/v1/read", signed(subscriber, mark, "eip191", "ReadMark"))
    expect(status == 200 and answer.get("unread") == 0, f"ReadMark: {status} {answer}")
    status, feed = server.request("GET", path, headers={"Authorization": feed_access_header(subscriber, AUDIENCE)})
    expect(status == 200 and feed.get("unread") == 0 and feed["feeds"][0].get("read") is True, f"feed after: {feed}")
    return "ChannelSettings, SubscriberSettings, Mute and ReadMark accepted; filtered 1, pushes 1 then 0 muted, unread 2 -> 0"


def check_serve_delegates(herald, scratch):
    """docs/protocol.md §11.1 signed by eth-account: a Delegate add, the delegate's Notification (both
    schemes) with the channel as sender and the delegate as signer, the remove, a refused send after it."""
    server = herald.server
    channel, bot, subscriber = Account.create(), Account.create(), Account.create()
    database = os.path.join(scratch, "herald.sqlite")
    herald.run(herald.new_home(), "channel", "add", channel.address, "--name", "Delegated", "--database", database)
    subscription = {"action": "subscribe", "channel": channel.address, "subscriber": subscriber.address}
    status, answer = server.request("POST", "/v1/subscriptions", signed(subscriber, subscription, "eip712", "Subscription"))
    expect(status == 200, f"subscribe: {status} {answer}")
    payload = {"notification": {"title": "Fill", "body": "Order 9"}, "data": {"type": "1", "amsg": "filled"}}

    def send(scheme):
        return server.request("POST", "/v1/notifications",
                              envelope(bot, notification(channel, payload), scheme, primary="Notification"))

    status, answer = send("eip712")
    expect(status == 401 and answer.get("error", {}).get("code") == "signature_mismatch",
           f"a send by a wallet that is no delegate: {status} {answer}")
    change = {"action": "add", "channel": channel.address, "delegate": bot.address}
    status, answer = server.request("POST", "/v1/delegates", signed(channel, change, "eip191", "Delegate"))
    expect(status == 200 and answer.get("status") == "added" and answer.get("delegate") == bot.address,
           f"Delegate add: {status} {answer}")
    for scheme in ("eip712", "eip191"):
        status, answer = send(scheme)
        expect(status == 202 and answer.get("recipients") == 1, f"the delegate's {scheme} send: {status} {answer}")
    sid = answer["sid"][0]
    status, report = server.request("GET", f"/v1/notifications/{sid}",
                                    headers={"Authorization": feed_access_header(bot, AUDIENCE)})
    expect(status == 200 and report.get("signer") == bot.address, f"status read by the delegate: {status} {report}")
    path = f"/v1/users/{subscriber.address}/feeds?limit=10"
    status, feed = server.request("GET", path, headers={"Authorization": feed_access_header(subscriber, AUDIENCE)})
    expect(status == 200 and feed["feeds"][0]["sender"] == channel.address, f"feed: {feed}")
    change = dict(change, action="remove")
    status, answer = server.request("POST", "/v1/delegates", signed(channel, change, "eip712", "Delegate"))
    expect(status == 200 and answer.get("status") == "removed", f"Delegate remove: {status} {answer}")
    status, answer = send("eip712")
    expect(status == 401, f"a send after the removal: {status} {answer}")
    return "Delegate add and remove 200; the delegate's sends 202 in both schemes, sender the channel, signer the bot; 401 after"


def check_serve_webhook(herald, scratch):
    """docs/protocol.md §11.3: eth-account signs a Webhook to a receiver here; a subscription's event arrives,
    and its Herald-Signature recovers, with eth-account alone, to /v1/info's webhookSigner."""
    import http.server

    server = herald.server
    channel, subscriber = Account.create(), Account.create()
    database = os.path.join(scratch, "herald.sqlite")
    herald.run(herald.new_home(), "channel", "add", channel.address, "--name", "Hooked", "--database", database)
    received = queue.Queue()

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            received.put((body, self.headers.get("Herald-Signature")))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    receiver = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
        change = {"channel": channel.address, "url": url, "events": "subscribed,unsubscribed"}
        status, answer = server.request("POST", "/v1/webhooks", signed(channel, change, "eip712", "Webhook"))
        expect(status == 200 and answer.get("status") == "set" and answer.get("events") == ["subscribed", "unsubscribed"],
               f"Webhook: {status} {answer}")
        subscription = {"action": "subscribe", "channel": channel.address, "subscriber": subscriber.address}
        status, answer = server.request("POST", "/v1/subscriptions", signed(subscriber, subscription, "eip191", "Subscription"))
        expect(status == 200, f"subscribe: {status} {answer}")
        try:
            body, signature = received.get(timeout=20)
        except queue.Empty:
            raise CheckFailed("no webhook delivery within 20 s")
    finally:
        receiver.shutdown()
    status, info = server.request("GET", "/v1/info")
    signer = info.get("webhookSigner")
    recovered = Account.recover_message(encode_defunct(primitive=body), signature=signature)
    expect(recovered == signer, f"the signature recovers to {recovered}, /v1/info says {signer}")
    events = json.loads(body)["events"]
    expect(len(events) == 1 and events[0]["event"] == "subscribed" and events[0]["subscriber"] == subscriber.address
           and events[0]["channel"] == channel.address, f"events: {events}")
    expect(body == json.dumps(json.loads(body), separators=(",", ":"), ensure_ascii=False).encode("utf-8"),
           "the body is not compact JSON")
    return f"1 event, Herald-Signature recovers with eth-account to webhookSigner {signer}"


def check_serve_sigterm(herald, scratch):
    code, elapsed = herald.server.terminate()
    expect(code == 0, f"exited {code} after SIGTERM{herald.server.stderr_tail()}")
    return f"exit 0 in {elapsed:.2f} s"


CHECKS = [
    ("a) create (default scrypt) -> eth-account decrypts to `wallet address`", check_create_default),
    ("a) default keystore has geth's v3 fields", check_default_fields),
    ("b) create --light -> eth-account decrypts to `wallet address`", check_create_light),
    ("c) eth-account scrypt keystore -> herald import", check_import_scrypt),
    ("c) eth-account pbkdf2 keystore -> herald import", check_import_pbkdf2),
    ("d) import with a wrong passphrase exits 2", check_import_wrong_passphrase),
    ("d) import of a truncated keystore exits 65", check_import_truncated),
    ("d) import of an over-cap scrypt n exits 65 before deriving", check_import_over_cap),
    ("e) import --private-key-file of an eth-account key", check_import_private_key),
    ("e) import --private-key-file of a key with a leading zero byte", check_import_private_key_leading_zero),
    ("passphrase bytes are used as given (NFD vs NFC)", check_passphrase_bytes_not_normalised),
    ("f) serve: GET /v1/info names the audience, chain id 1 and the EIP-712 domain", check_serve_info),
    ("f) serve: eth-account EIP-712 DeviceBinding register -> 200 registered", check_serve_eip712_register),
    ("f) serve: the same EIP-712 body again -> its first answer; under EIP-191 -> 409", check_serve_eip712_replay),
    ("f) serve: eth-account EIP-191 DeviceBinding unregister -> 200 unregistered", check_serve_eip191_unregister),
    ("f) serve: /v1/users/<wallet>/pubkey is eth-account's public key", check_serve_pubkey),
    ("f) serve: a signature by another eth-account key -> 401 signature_mismatch", check_serve_signature_mismatch),
    ("g) serve: eth-account Subscription, Notification (both schemes) and FeedAccess -> feeds", check_serve_notifications),
    ("g) serve: eth-account ChannelSettings, SubscriberSettings, Mute, ReadMark (§10)", check_serve_subscriber_control),
    ("g) serve: eth-account Delegate and a delegate's Notification (§11.1)", check_serve_delegates),
    ("g) serve: eth-account Webhook; the delivery's signature checked with eth-account (§11.3)", check_serve_webhook),
    ("f) serve: SIGTERM drains and exits 0", check_serve_sigterm),
] + bisq_interop.CHECKS + webpush_interop.CHECKS


def main():
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} HERALD_BINARY", file=sys.stderr)
        return 64
    binary = os.path.abspath(sys.argv[1])
    if not os.access(binary, os.X_OK):
        print(f"error: {binary} is not an executable herald binary", file=sys.stderr)
        return 64

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="herald-interop-") as scratch:
        herald = Herald(binary, scratch)
        try:
            passed, failed = run_checks(herald, scratch)
        finally:
            herald.server.close()  # the SIGTERM check normally stopped it already
    print(f"(total {time.monotonic() - started:.1f} s)", file=sys.stderr)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def run_checks(herald, scratch):
    """Runs every check in order; returns (passed, failed)."""
    passed = failed = 0
    for title, check in CHECKS:
        check_started = time.monotonic()
        try:
            detail = check(herald, scratch)
            status = "PASS"
            passed += 1
        except CheckFailed as error:
            detail, status = str(error), "FAIL"
            failed += 1
        except Exception as error:  # a crash in the check itself is a failure too, not an abort
            detail = f"{type(error).__name__}: {error}"
            status = "FAIL"
            failed += 1
            traceback.print_exc()
        elapsed = time.monotonic() - check_started
        print(f"{status}  {title} — {detail} [{elapsed:.1f} s]", flush=True)
    return passed, failed


if __name__ == "__main__":
    sys.exit(main())
