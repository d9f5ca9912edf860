#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Man pages and shell completions from scprof itself, and their check.

One source: each command's option table (the getopt table cli_parse()
uses, printed by the hidden `scprof CMD --list-options`) and its --help
text. The man pages' SYNOPSIS, DESCRIPTION and OPTIONS are the --help text
turned into roff; docs/man/*.8.in add the hand-written NAME, EXAMPLES,
FILES and SEE ALSO. The completions offer the table's options; what an
option's value completes to is COMPLETE below.

    gendocs.py man CMD TEMPLATE   the man page of CMD (profile, top, ...)
    gendocs.py bash               bash completion
    gendocs.py zsh                zsh completion
    gendocs.py check MANDIR       table == --help == man pages; fail naming
                                  each option missing from one of them

SCPROF (environment) is the binary to ask (default ./scprof); VERSION and
DATE fill the man pages' title line.
"""
import os
import re
import subprocess
import sys

SCPROF = os.environ.get("SCPROF", "./scprof")

# Subcommands: `scprof NAME` (user/cmd/main.c); "profile" is plain scprof.
COMMANDS = ["profile", "top", "daemon", "calibrate", "verdict", "features",
            "diff"]
# What a command's arguments (after its options) complete to: "files".
OPERANDS = {"diff": "files"}

# What the value of an option completes to, by (command, long option);
# "*" matches any command. A list: those words ("csv" after "," when the
# kind is "list,": a comma-separated list); "pids", "files", "dirs":
# running pids, file names, directories; "loops": calibrate's loop names;
# "columns", "sort-keys": the column table's (scprof --list-columns,
# --list-sort-keys)
# (from `scprof calibrate --list`); "free": nothing (a number, an address).
# `check` fails when an option that takes a value has no entry, so a new
# option is not forgotten here.
def scprof_list(what):
    """A hidden list of scprof's: --list-columns, --list-sort-keys (the
    column table's canonical names)."""
    return subprocess.run([SCPROF, what], check=True, capture_output=True,
                          text=True).stdout.split()


COMPLETE = {
    ("*", "pid"): "pids",
    ("*", "cgroup"): "dirs",
    ("*", "output"): "files",
    ("*", "cache"): "files",
    ("*", "pidfile"): "files",
    ("*", "web-config"): "files",
    ("*", "folded"): "files",
    ("*", "flamegraph"): "files",
    ("*", "pprof"): "files",
    ("*", "slow-out"): "files",
    ("*", "trace-out"): "files",
    ("profile", "format"): ["table", "json", "csv"],
    ("profile", "stacks-by"): ["count", "time", "blocked"],
    ("calibrate", "format"): ["table", "json"],
    ("verdict", "format"): ["table", "json"],
    ("features", "format"): ["table", "json"],
    ("diff", "format"): ["table", "json"],
    ("profile", "sort"): "sort-keys",
    ("profile", "columns"): ("list,", "columns"),
    ("top", "sort"): ["calls", "errors", "p99", "time"],
    ("top", "group"): ["pid", "tid", "comm", "cgroup", "unit", "container",
                       "pod", "qos"],
    ("calibrate", "loops"): ("list,", "loops"),
    ("*", "-e"): "free",
    ("*", "by"): ("list,", ["pid", "tid", "comm", "cgroup", "unit",
                            "container", "pod", "qos"]),
    ("daemon", "otlp-ca"): "files",
    ("daemon", "otlp-compression"): ["gzip", "none"],
    ("daemon", "otlp-cert"): "files",
    ("daemon", "otlp-key"): "files",
    ("daemon", "otlp-headers-file"): "files",
    ("daemon", "labels"): ("list,", ["comm", "cgroup", "unit", "container",
                                     "pod", "qos"]),
}
FREE = ["duration", "interval", "max-entries", "max-procs", "max-exited",
        "frames", "rows", "listen", "comm-series", "fold-interval",
        "http-timeout", "stacks", "trace", "latency-duty", "max-overhead",
        "latency-period",
        "max-series", "min-change", "slow", "otlp-endpoint", "otlp-interval",
        "otlp-timeout", "otlp-queue", "otlp-header", "series-ttl"]
for _o in FREE:
    COMPLETE[("*", _o)] = "free"


def run(cmd, *args):
    argv = [SCPROF] + ([] if cmd == "profile" else [cmd]) + list(args)
    r = subprocess.run(argv, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        sys.exit(f"gendocs: {' '.join(argv)} exited {r.returncode}: "
                 f"{r.stderr.strip()}")
    return r.stdout


class Opt:
    def __init__(self, short, long, arg):
        self.short = None if short == "-" else short  # "-p"
        self.long = None if long == "-" else long      # "pid"
        self.arg = arg                                 # value/optional/none

    def names(self):
        n = []
        if self.short:
            n.append(self.short)
        if self.long:
            n.append("--" + self.long)
        return n


def options(cmd):
    """The option table of cmd, from scprof CMD --list-options."""
    opts = []
    for line in run(cmd, "--list-options").splitlines():
        f = line.split()
        if len(f) != 3:
            sys.exit(f"gendocs: bad --list-options line {line!r}")
        opts.append(Opt(*f))
    return opts


def value_kind(cmd, opt):
    """What opt's value completes to, by its long name, else its short one
    ("-e" for an option that has no long name)."""
    for key in ((cmd, opt.long), ("*", opt.long), (cmd, opt.short),
                ("*", opt.short)):
        if key in COMPLETE:
            kind = COMPLETE[key]
            # the column table's names, from scprof itself
            if kind == "sort-keys":
                return scprof_list("--list-sort-keys")
            return kind
    return None


# ---- --help to roff --------------------------------------------------

ITEM = re.compile(r"^( +)(\S.*?)(?: {2,}(\S.*))?$")
HEADING = re.compile(r"^[A-Z].{0,70}:$")


def roff_text(s):
    """Escape text for roff: backslashes, dashes of options, a leading dot."""
    s = s.replace("\\", "\\e")
    s = re.sub(r"(?<![\w/])(--?)(?=[\w\[])",
               lambda m: "\\-" * len(m.group(1)), s)
    if s[:1] in (".", "'"):
        s = "\\&" + s
    return s


def roff_tag(tag):
    """An item's tag: options bold, their values italic."""
    has_opt = any(t.startswith("-") for t in re.split(r"[ ,]+", tag))
    out = []
    for tok in re.split(r"(, | )", tag):
        if tok in (", ", " ") or not tok:
            out.append(tok)
        elif tok.startswith("-"):
            # --stacks[=N]: the name bold, its value italic
            m = re.match(r"(--?[\w-]+)(.*)", tok)
            out.append("\\fB" + roff_text(m.group(1)) + "\\fR")
            if m.group(2):
                out.append("\\fI" + roff_text(m.group(2)) + "\\fR")
        elif not has_opt:
            out.append("\\fB" + roff_text(tok) + "\\fR")
        else:
            out.append("\\fI" + roff_text(tok) + "\\fR")
    return "".join(out)


def help_items(lines):
    """Split indented lines into (indent, tag, [description lines])."""
    # The description column: where most descriptions start. A tag too
    # long for its column is followed by one space only.
    cols = {}
    for line in lines:
        m = ITEM.match(line)
        if m and m.group(3):
            c = len(line) - len(m.group(3))
            cols[c] = cols.get(c, 0) + 1
    items = []
    for line in lines:
        m = ITEM.match(line)
        indent = len(m.group(1)) if m else 0
        tag, desc = (m.group(2), m.group(3)) if m else ("", None)
        if m and desc is None:
            for c in cols:
                if indent < c - 1 < len(line) and line[c - 1] == " " and \
                        line[c - 2] != " ":
                    tag, desc = line[indent:c - 1], line[c:]
        starts = m and (indent <= 6 and (tag.startswith("-") or indent <= 4))
        if starts and items and indent > items[-1][0] + 2 and \
                not tag.startswith("-"):
            starts = False  # deeper than the item: its description
        if starts and items and items[-1][1] == "\\(bu" and \
                indent > items[-1][0]:
            starts = False  # a bullet's next line
        if starts and tag.startswith("- "):
            items.append([indent, "\\(bu",
                          [tag[2:] + (" " + desc if desc else "")]])
        elif starts:
            items.append([indent, tag, [desc] if desc else []])
        elif items:
            items[-1][2].append(line.strip())
        else:
            items.append([indent, "", [line.strip()]])
    return items


def blocks(text):
    block = []
    for line in text.splitlines():
        if line.strip():
            block.append(line.rstrip())
        elif block:
            yield block
            block = []
    if block:
        yield block


def render_block(block, out):
    prose = []

    def flush():
        if prose:
            out.append(".PP")
            out.extend(roff_text(p) for p in prose)
            prose.clear()

    i = 0
    while i < len(block):
        if not block[i].startswith(" "):
            prose.append(block[i])
            i += 1
            continue
        flush()
        j = i
        while j < len(block) and block[j].startswith(" "):
            j += 1
        nested = False
        for indent, tag, desc in help_items(block[i:j]):
            # Items deeper than an option's column (and not options) are
            # a list inside the item before them.
            inner = indent >= 4 and not tag.startswith("-")
            if inner != nested:
                out.append(".RS" if inner else ".RE")
                nested = inner
            if tag == "\\(bu":
                out.append(".IP \\(bu 2")
            elif tag:
                out.append(".TP")
                out.append(roff_tag(tag))
            else:
                out.append(".IP")
            out.extend(roff_text(d) for d in desc)
        if nested:
            out.append(".RE")
        i = j
    flush()


def help_to_roff(cmd):
    """SYNOPSIS, DESCRIPTION, OPTIONS (and NOTES) from CMD --help."""
    text = run(cmd, "--help")
    bl = list(blocks(text))
    usage, rest = bl[0], bl[1:]
    if not usage[0].startswith("Usage: "):
        sys.exit(f"gendocs: {cmd} --help does not start with Usage:")
    out = [".SH SYNOPSIS"]
    for k, line in enumerate(usage):
        line = line.strip()
        if line.startswith("Usage: "):
            line = line[len("Usage: "):]
        words = line.split(" ")
        n = 2 if len(words) > 1 and words[1] in COMMANDS else 1
        out.append(".PP" if k == 0 else ".br")
        out.append("\\fB" + " ".join(words[:n]) + "\\fR " +
                   roff_text(" ".join(words[n:])))

    def has_options(b):
        return any(re.match(r"^ {2,6}-[^ ]", line) for line in b)

    last_opt = max((k for k, b in enumerate(rest)
                    if HEADING.match(b[0]) and has_options(b)), default=-1)
    first_head = next((k for k, b in enumerate(rest)
                       if HEADING.match(b[0])), len(rest))
    out.append(".SH DESCRIPTION")
    for k, b in enumerate(rest):
        if k == first_head:
            out.append(".SH OPTIONS")
        if k == last_opt + 1 and last_opt >= 0 and k > first_head:
            out.append(".SH NOTES")
        if HEADING.match(b[0]) and len(b) > 1 and b[1].startswith(" "):
            if b[0] != "Options:":  # already the section's name
                out.append(".SS " + roff_text(b[0][:-1]))
            b = b[1:]
        render_block(b, out)
    return "\n".join(out) + "\n"


def man(cmd, template):
    with open(template) as f:
        t = f.read()
    if "@HELP@" not in t:
        sys.exit(f"gendocs: {template} has no @HELP@")
    t = t.replace("@VERSION@", os.environ.get("VERSION", "unknown"))
    t = t.replace("@DATE@", os.environ.get("DATE", "unknown"))
    return t.replace("@HELP@\n", help_to_roff(cmd))


# ---- completions ------------------------------------------------------

def loops():
    return [line.split()[0] for line in run("calibrate", "--list").splitlines()
            if line.strip()]


def words_of(kind):
    if kind == "loops":
        return loops()
    if kind == "columns":
        return scprof_list("--list-columns")
    return kind


def bash():
    head = ["# bash completion for scprof. Generated by docs/gendocs.py from",
            "# scprof's option tables: do not edit.", ""]
    takes = ["# Does option $2 of command $1 take a value (as the next word)?",
             "_scprof_takes_value()", "{", "    case $1:$2 in"]
    values = ["# The values of option $2 of command $1.",
              "_scprof_value()", "{", "    case $1:$2 in"]
    opts = ["# The options of command $1.", "_scprof_options()", "{",
            "    case $1 in"]
    for cmd in COMMANDS:
        table = options(cmd)
        names = " ".join(n for o in table for n in o.names())
        opts.append(f"    {cmd}) echo '{names}' ;;")
        for o in table:
            if o.arg == "none":
                continue
            kind = value_kind(cmd, o)
            # An optional value is only ever --opt=VALUE.
            pats = "|".join(f"{cmd}:{n}" for n in o.names()
                            if o.arg == "value" or n.startswith("--"))
            if o.arg == "value":
                takes.append(f"    {pats}) return 0 ;;")
            if kind is None or kind == "free":
                continue
            if kind == "pids":
                body = "_pids"
            elif kind == "files":
                body = "_filedir"
            elif kind == "dirs":
                body = "_filedir -d"
            elif isinstance(kind, tuple):
                w = " ".join(words_of(kind[1]))
                body = ("local pre=${cur%${cur##*,}}; "
                        f"COMPREPLY=($(compgen -P \"$pre\" -W '{w}' -- "
                        "\"${cur##*,}\")); compopt -o nospace")
            else:
                body = (f"COMPREPLY=($(compgen -W '{' '.join(kind)}' -- "
                        "\"$cur\"))")
            values.append(f"    {pats}) {body} ;;")
    takes += ["    esac", "    return 1", "}", ""]
    values += ["    esac", "}", ""]
    opts += ["    esac", "}", ""]
    subs = " ".join(COMMANDS[1:])
    main = [
        "_scprof()",
        "{",
        "    local cur prev words cword split",
        "    _init_completion -s || return",
        "    local cmd=profile j",
        "    case ${words[1]} in",
        "    " + "|".join(COMMANDS[1:]) + ") cmd=${words[1]} ;;",
        "    esac",
        "    # scprof [OPTIONS] COMMAND [ARGS]: the first word that is",
        "    # neither an option nor an option's value is the command to run,",
        "    # completed as a command line of its own.",
        "    if [[ $cmd == profile ]]; then",
        "        for ((j = 1; j < cword; j++)); do",
        "            if [[ ${words[j]} == -- ]]; then",
        "                _command_offset $((j + 1))",
        "                return",
        "            fi",
        "            if [[ ${words[j]} != -* ]] && { ((j == 1)) ||",
        "                ! _scprof_takes_value profile \"${words[j - 1]}\"; }; then",
        "                _command_offset $j",
        "                return",
        "            fi",
        "        done",
        "    fi",
        "    if { $split || ((cword > 1)); } &&",
        "        _scprof_takes_value \"$cmd\" \"$prev\" ||",
        "        { $split && [[ $prev == --* ]]; }; then",
        "        _scprof_value \"$cmd\" \"$prev\"",
        "        return",
        "    fi",
        ] + [
        f"    if [[ $cmd == {c} && $cur != -* ]]; then _filedir; return; fi"
        for c, kind in OPERANDS.items() if kind == "files"] + [
        "    if [[ $cur == -* || $cmd != profile ]]; then",
        "        COMPREPLY=($(compgen -W \"$(_scprof_options $cmd)\" -- \"$cur\"))",
        "        return",
        "    fi",
        "    # scprof WORD: a subcommand, or a command to profile",
        f"    COMPREPLY=($(compgen -W '{subs}' -- \"$cur\") $(compgen -c -- \"$cur\"))",
        "}",
        "",
        "complete -F _scprof scprof",
        ""]
    return "\n".join(head + takes + values + opts + main)


def help_descs(cmd):
    """Option name -> the first words of its --help description."""
    descs = {}
    for block in blocks(run(cmd, "--help")):
        for _, tag, desc in help_items([ln for ln in block
                                        if ln.startswith(" ")]):
            if not tag.startswith("-") or not desc:
                continue
            for tok in re.split(r"[ ,]+", tag):
                if tok.startswith("-"):
                    descs.setdefault(tok.split("=")[0].split("[")[0],
                                     desc[0])
    return descs


def zsh_desc(s):
    s = re.sub(r"[\[\]:\\]", "", s).replace("'", "'\\''")
    return s.split(";")[0].strip()


def zsh():
    out = ["#compdef scprof",
           "# zsh completion for scprof. Generated by docs/gendocs.py from",
           "# scprof's option tables: do not edit.", ""]
    for cmd in COMMANDS:
        descs = help_descs(cmd)
        specs = []
        for o in options(cmd):
            kind = value_kind(cmd, o)
            if o.arg != "value":
                act = ""  # an optional value is --opt=VALUE only
            elif kind == "pids":
                act = ":pid:_pids"
            elif kind == "files":
                act = ":file:_files"
            elif kind == "dirs":
                act = ":directory:_files -/"
            elif isinstance(kind, tuple):
                act = ":value:_sequence compadd - " + \
                    " ".join(words_of(kind[1]))
            elif isinstance(kind, list):
                act = f":value:({' '.join(kind)})"
            else:
                act = ":value: "
            names = o.names()
            d = zsh_desc(descs.get(names[-1], descs.get(names[0], "")))
            tail = f"'[{d}]{act}'"
            if len(names) > 1:
                specs.append(f"'({' '.join(names)})'{{{','.join(names)}}}"
                             + tail)
            else:
                specs.append(f"'{names[0]}'" + tail)
        if cmd == "profile":
            specs.append("'(-)1:command:_command_names -e'")
            specs.append("'*::arguments:_normal'")
        if OPERANDS.get(cmd) == "files":
            specs.append("'*:file:_files'")
        out.append(f"_scprof_{cmd}() {{")
        out.append("    _arguments -s -S \\\n        " +
                   " \\\n        ".join(specs))
        out.append("}")
        out.append("")
    out += ["_scprof() {",
            "    if (( CURRENT == 2 )) && [[ $words[2] != -* ]]; then",
            "        _alternative 'commands:command:(" +
            " ".join(COMMANDS[1:]) +
            ")' 'programs:program:_command_names -e'",
            "        return",
            "    fi",
            "    case $words[2] in",
            "    " + "|".join(COMMANDS[1:]) + ")",
            "        local cmd=$words[2]",
            "        shift words; (( CURRENT-- ))",
            "        _scprof_$cmd ;;",
            "    *) _scprof_profile ;;",
            "    esac",
            "}",
            "",
            "_scprof \"$@\"", ""]
    return "\n".join(out)


# ---- the check ---------------------------------------------------------

def help_options(cmd):
    """Every option named in an item tag of CMD --help."""
    found = set()
    for line in run(cmd, "--help").splitlines():
        m = re.match(r"^ {2,6}(-[^ ].*?)(?: {2,}|$)", line)
        if not m or m.group(1).startswith("- "):
            continue
        for tok in re.split(r"[ ,]+", m.group(1)):
            m2 = re.match(r"^(--?[\w-]+)", tok)
            if m2:
                found.add(m2.group(1))
    return found


def man_options(path):
    found = set()
    with open(path) as f:
        lines = f.read().splitlines()
    for k, line in enumerate(lines):
        if line.startswith(".TP") and k + 1 < len(lines):
            for m in re.finditer(r"\\fB((?:\\-)+[\w\\-]+)\\fR", lines[k + 1]):
                found.add(m.group(1).replace("\\-", "-"))
    return found


def page_of(cmd):
    return "scprof.8" if cmd == "profile" else f"scprof-{cmd}.8"


def check(mandir):
    errors = []
    for cmd in COMMANDS:
        table = {n for o in options(cmd) for n in o.names()}
        hlp = help_options(cmd)
        page = os.path.join(mandir, page_of(cmd))
        mano = man_options(page)
        who = "scprof" if cmd == "profile" else f"scprof {cmd}"
        for n in sorted(table - hlp):
            errors.append(f"{who}: option {n} is in the option table but "
                          "not in --help")
        for n in sorted(hlp - table):
            errors.append(f"{who}: --help names option {n}, which the "
                          "option table does not have")
        for n in sorted(table - mano):
            errors.append(f"{who}: option {n} is not in {page}")
        for n in sorted(mano - table):
            errors.append(f"{who}: {page} names option {n}, which the "
                          "option table does not have")
        for o in options(cmd):
            if o.arg != "none" and value_kind(cmd, o) is None:
                errors.append(f"{who}: option {' '.join(o.names())} takes a "
                              "value and docs/gendocs.py COMPLETE does not "
                              "say what it completes to (add it, 'free' "
                              "for nothing)")
    listed = set(re.findall(r"^  scprof (\w+)", run("profile", "--help"),
                            re.M))
    for c in sorted(listed ^ set(COMMANDS[1:])):
        errors.append(f"scprof --help and docs/gendocs.py COMMANDS differ "
                      f"on the command {c}")
    for e in errors:
        print("gendocs check: " + e, file=sys.stderr)
    return 1 if errors else 0


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "man" and len(sys.argv) == 4:
        sys.stdout.write(man(sys.argv[2], sys.argv[3]))
    elif sys.argv[1:] == ["bash"]:
        sys.stdout.write(bash())
    elif sys.argv[1:] == ["zsh"]:
        sys.stdout.write(zsh())
    elif len(sys.argv) == 3 and sys.argv[1] == "check":
        return check(sys.argv[2])
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
