#!/usr/bin/env python3
"""Writes herald(1) from the argument parser's own description of the command tree.

    herald --experimental-dump-help | scripts/package/manpage.py VERSION > herald.1

ArgumentParser describes every command, subcommand, argument and option as JSON; this renders that
as a man page (roff, man(7) macros), so the page cannot drift from the binary it ships with. The server
settings of `herald serve` are one flag each, listed by `herald serve --help`; the page points at them
and at /usr/share/doc/herald for the rest.
"""
import datetime
import json
import sys


def roff(text):
    """Text safe in roff: backslashes doubled, a leading dot or quote escaped."""
    text = (text or "").replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def option_label(argument):
    names = argument.get("names", [])
    spelled = [("--" if n["kind"] == "long" else "-") + n["name"] for n in names if n["kind"] in ("long", "short")]
    value = argument.get("valueName")
    if argument.get("kind") == "positional":
        return "\\fI" + roff(value or "ARG") + "\\fR"
    label = ", ".join("\\fB" + roff(s) + "\\fR" for s in spelled)
    if argument.get("kind") == "option" and value:
        label += " \\fI" + roff(value) + "\\fR"
    return label


def command_section(command, path, out):
    name = " ".join(path + [command["commandName"]])
    if command.get("shouldDisplay", True) is False or command["commandName"] == "help":
        return
    out.append(".SS " + roff(name))
    if command.get("abstract"):
        out.append(roff(command["abstract"]))
    if command.get("discussion"):
        # Written for a terminal, with its own line breaks and columns: kept as it is.
        out += [".PP", ".nf", roff(command["discussion"]), ".fi"]
    for argument in command.get("arguments", []):
        if argument.get("shouldDisplay", True) is False:
            continue
        if any(n["name"] in ("help", "version") for n in argument.get("names", [])):
            continue
        out.append(".TP")
        out.append(option_label(argument))
        out.append(roff(argument.get("abstract", "")))
    for sub in command.get("subcommands", []):
        command_section(sub, path + [command["commandName"]], out)


def main():
    version = sys.argv[1] if len(sys.argv) > 1 else ""
    tree = json.load(sys.stdin)["command"]
    date = datetime.date.today().isoformat()
    out = [
        '.TH HERALD 1 "%s" "herald %s" "User Commands"' % (date, roff(version)),
        ".SH NAME",
        "herald \\- wallet-bound push notification server and client",
        ".SH SYNOPSIS",
        ".B herald",
        "\\fICOMMAND\\fR [\\fIOPTIONS\\fR]",
        ".SH DESCRIPTION",
        roff(tree.get("abstract", "")),
        ".PP",
        "Every server setting of \\fBherald serve\\fR has a flag, a HERALD_* environment variable and a key",
        "in the \\fB\\-\\-config\\fR file; \\fBherald serve \\-\\-help\\fR lists them, and",
        "/usr/share/doc/herald/herald.yaml.sample names each with its default.",
        ".SH COMMANDS",
    ]
    for sub in tree.get("subcommands", []):
        command_section(sub, [tree["commandName"]], out)
    out += [
        ".SH FILES",
        ".TP",
        "/etc/herald/herald.yaml",
        "the server's configuration (see herald.yaml.sample)",
        ".TP",
        "/var/lib/herald",
        "the server's SQLite database, when the systemd unit runs it",
        ".TP",
        "~/.herald",
        "the client's keystores and inbox cache (\\fB\\-\\-home\\fR, HERALD_HOME)",
        ".SH EXIT STATUS",
        "0 on success; 64 for a usage or configuration error; other codes as docs/cli.md lists them.",
        ".SH SEE ALSO",
        "The documentation at /usr/share/doc/herald and in the source repository's docs/ folder.",
    ]
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
