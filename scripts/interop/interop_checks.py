"""What every interop check shares: the failure it raises and the assertion that raises it."""


class CheckFailed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)
