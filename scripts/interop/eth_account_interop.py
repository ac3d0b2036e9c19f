#!/usr/bin/env python3
"""Interoperability of `herald wallet` keystores with eth-account (the Python reference).

Usage: eth_account_interop.py HERALD_BINARY

Every check drives the real binary in a throwaway --home and compares with eth-account.
Prints one line per check, then `N passed, M failed`; exits 1 if anything failed.
Needs eth-account only (scripts/interop/run.sh installs it in a temporary venv).
"""

import json
import os
import re
import stat
import subprocess
import sys
import tempfile
import time
import traceback
import unicodedata

from eth_account import Account

# Non-ASCII on purpose: both sides must hash the same UTF-8 bytes.
PASSPHRASE = "pässwörd ✓"
# The same text in NFD (a + combining diaeresis): different bytes, so a different passphrase.
PASSPHRASE_NFD = unicodedata.normalize("NFD", PASSPHRASE)

EXIT_OK, EXIT_WRONG_PASSPHRASE, EXIT_USAGE, EXIT_BAD_INPUT = 0, 2, 64, 65
COMMAND_TIMEOUT = 120


class CheckFailed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def hex_key(key_bytes):
    return "0x" + bytes(key_bytes).hex()


class Herald:
    def __init__(self, binary, scratch):
        self.binary = binary
        self.scratch = scratch
        self.homes = 0

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
]


def main():
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} HERALD_BINARY", file=sys.stderr)
        return 64
    binary = os.path.abspath(sys.argv[1])
    if not os.access(binary, os.X_OK):
        print(f"error: {binary} is not an executable herald binary", file=sys.stderr)
        return 64

    passed = failed = 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="herald-interop-") as scratch:
        herald = Herald(binary, scratch)
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
    print(f"(total {time.monotonic() - started:.1f} s)", file=sys.stderr)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
