# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""--version, the man pages against --help and the option tables, the
bash and zsh completions, driven through bash-completion and zsh, and the
README and docs/*.md pages: a short landing page, links that lead
somewhere."""
import os
import re
import shlex
import shutil
import subprocess
import tempfile

import pytest

from conftest import (COMMANDS, OUTPUT, ROOT, SCPROF, MAKE, make_env, need,
                      page, run, scprof_argv, table)

MANDIR = os.path.join(OUTPUT, "man")
BASH_COMP = os.path.join(OUTPUT, "completion", "scprof")
ZSH_COMP = os.path.join(OUTPUT, "completion", "_scprof")
GENDOCS = os.path.join(ROOT, "docs", "gendocs.py")


# ---- --version --------------------------------------------------------

def test_version_names_the_git_revision():
    r = run([SCPROF, "--version"])
    assert r.returncode == 0, r.stderr
    m = re.fullmatch(r"scprof (\d+\.\d+\.\d+) \(git (\S+)\)\n", r.stdout)
    assert m, f"unexpected --version output {r.stdout!r}"
    with open(os.path.join(ROOT, "Makefile")) as f:
        version = re.search(r"^VERSION := (\S+)", f.read(), re.M).group(1)
    assert m.group(1) == version
    if os.path.exists(os.path.join(ROOT, ".git")):
        git = run([need("git"), "-C", ROOT, "describe", "--always", "--dirty"])
        assert git.returncode == 0, git.stderr
        # The binary may predate the last edit: compare the commit part.
        assert m.group(2).split("-dirty")[0] == \
            git.stdout.strip().split("-dirty")[0]
    else:
        # a tarball's build (see below)
        assert m.group(2) == "unknown"
    assert run([SCPROF, "-V"]).stdout == r.stdout


def test_version_outside_git_is_unknown():
    """From a tarball (no .git), the revision is "unknown"."""
    with tempfile.TemporaryDirectory() as d:
        shutil.copy(os.path.join(ROOT, "Makefile"), d)
        r = run([MAKE, "-s", "-C", d, "OUTPUT=.output",
                 ".output/scprof_version.h"], env=make_env())
        assert r.returncode == 0, r.stderr
        with open(os.path.join(d, ".output", "scprof_version.h")) as f:
            assert f.read() == '#define SCPROF_GIT_REV "unknown"\n'


# ---- man pages ---------------------------------------------------------

def test_man_pages_document_every_option():
    """gendocs check: option table == --help == man page, per command."""
    r = run(["python3", GENDOCS, "check", MANDIR],
            env=dict(os.environ, SCPROF=SCPROF))
    assert r.returncode == 0, r.stderr


def test_help_man_and_completion_list_every_column():
    """-U's columns and -S's keys come from the column table (the hidden
    --list-columns, --list-sort-keys): --help names each with its help,
    the man page has the same text, and bash offers each after -U and
    -S."""
    cols = run([SCPROF, "--list-columns"]).stdout.split()
    keys = run([SCPROF, "--list-sort-keys"]).stdout.split()
    assert "on-cpu" in cols and "io-wait" in cols and "calls" in cols, cols
    assert keys == cols + ["nothing"], keys
    help_text = " ".join(run([SCPROF, "--help"]).stdout.split())
    with open(os.path.join(MANDIR, "scprof.8")) as f:
        man = " ".join(f.read().replace("\\-", "-").replace("\\", "")
                       .split())
    with open(os.path.join(OUTPUT, "completion", "scprof")) as f:
        bash = f.read()
    for c in cols:
        assert re.search(r"(?:[:,]| or) %s[ ,(]" % re.escape(c), help_text), c
        assert c in man, c
    for opt in ("-U", "-S"):
        line = next(ln for ln in bash.splitlines()
                    if f"profile:{opt}|" in ln and "compgen" in ln)
        for c in cols:
            assert f" {c} " in f" {line.split(chr(39))[1]} ", (opt, c)


USAGE = os.path.join(ROOT, "docs", "usage.md")
COLUMNS_SECTION = "## Columns, percentiles, bytes and histograms"


def columns_missing_from_usage(cols, usage_text):
    """The columns that usage.md's section on columns does not name (in
    backquotes): the one place a column is written about by hand."""
    start = usage_text.index(COLUMNS_SECTION)
    end = usage_text.find("\n## ", start + len(COLUMNS_SECTION))
    section = usage_text[start:end if end >= 0 else len(usage_text)]
    return [c for c in cols if f"`{c}`" not in section]


def test_usage_names_every_column():
    """docs/usage.md's section on columns names each of the column
    table's columns (--list-columns); the check names one it lacks."""
    cols = run([SCPROF, "--list-columns"]).stdout.split()
    with open(USAGE) as f:
        usage = f.read()
    assert columns_missing_from_usage(cols, usage) == [], \
        "docs/usage.md does not name these columns"
    # the check can fail: a column the page leaves out is named
    dropped = usage.replace("`io-wait`", "io-wait")
    assert columns_missing_from_usage(cols, dropped) == ["io-wait"]


def fake_scprof(d, extra_option=None, drop_help=None):
    """A wrapper around scprof whose option table gains an option, or whose
    --help loses a line: what a forgotten option looks like."""
    path = os.path.join(d, "scprof")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n")
        if extra_option:
            f.write('case "$*" in *--list-options) "%s" "$@"; '
                    'echo "- %s value"; exit ;; esac\n'
                    % (SCPROF, extra_option))
        if drop_help:
            f.write('case "$*" in *--help) "%s" "$@" | grep -v -- %s; '
                    'exit ;; esac\n' % (SCPROF, shlex.quote(drop_help)))
        f.write('exec "%s" "$@"\n' % SCPROF)
    os.chmod(path, 0o755)
    return path


def test_check_names_an_option_missing_from_help_and_man():
    with tempfile.TemporaryDirectory() as d:
        fake = fake_scprof(d, extra_option="not-an-option")
        r = run(["python3", GENDOCS, "check", MANDIR],
                env=dict(os.environ, SCPROF=fake))
        assert r.returncode != 0
        assert "option --not-an-option is in the option table but not in --help" \
            in r.stderr
        assert re.search(r"^gendocs check: scprof: option --not-an-option is not in "
                         r"\S*/scprof\.8$", r.stderr, re.M), r.stderr
        assert re.search(r"^gendocs check: scprof top: option --not-an-option is not "
                         r"in \S*/scprof-top\.8$", r.stderr, re.M), r.stderr


def test_check_names_an_option_dropped_from_help():
    with tempfile.TemporaryDirectory() as d:
        fake = fake_scprof(d, drop_help="--histograms")
        r = run(["python3", GENDOCS, "check", MANDIR],
                env=dict(os.environ, SCPROF=fake))
        assert r.returncode != 0
        assert "scprof: option -H is in the option table but not in " \
            "--help" in r.stderr
        assert "--histograms is in the option table but not in --help" \
            in r.stderr


@pytest.mark.parametrize("cmd", COMMANDS)
def test_man_page_renders_without_warnings(cmd):
    need("groff")
    path = os.path.join(MANDIR, page(cmd))
    r = run(["groff", "-man", "-ww", "-Tutf8", path])
    assert r.returncode == 0
    assert r.stderr == "", f"groff warnings for {path}:\n{r.stderr}"
    text = re.sub(".\b", "", r.stdout)
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXAMPLES",
                    "SEE ALSO"):
        assert re.search(rf"^{section}$", text, re.M), \
            f"{page(cmd)} has no {section}"
    # Every option of the table reads as itself in the rendered page.
    for name in table(cmd):
        assert re.search(rf"(^|[\s,]){re.escape(name)}([\s,=[]|$)", text,
                         re.M), f"{name} not in rendered {page(cmd)}"


# ---- bash completion ---------------------------------------------------

BASH_DRIVER = r'''
source /usr/share/bash-completion/bash_completion
source "$COMP_FILE"
while IFS= read -r line; do
    eval "COMP_WORDS=($line)"
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="${COMP_WORDS[*]}"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _scprof scprof "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf '%s\n' "${COMPREPLY[*]}"
done
'''


def complete(*lines):
    """COMPREPLY (a list) for each command line; the last word is the one
    completed ('' for a new word)."""
    need("bash")
    assert os.path.exists("/usr/share/bash-completion/bash_completion"), \
        "bash-completion is not installed"
    inp = "".join(" ".join(shlex.quote(w) for w in words) + "\n"
                  for words in lines)
    r = run(["bash", "--norc", "-c", BASH_DRIVER], input=inp,
            env=dict(os.environ, COMP_FILE=BASH_COMP))
    assert r.returncode == 0, r.stderr
    out = r.stdout.split("\n")[:len(lines)]
    return [o.split() for o in out]


def test_bash_completes_subcommands_and_options():
    sub, top_s, top_opts = complete(["scprof", ""], ["scprof", "top", "--s"],
                                    ["scprof", "top", "-"])
    assert {"top", "daemon", "calibrate", "verdict"} <= set(sub)
    assert top_s == ["--sort"]
    assert set(top_opts) == table("top")


@pytest.mark.parametrize("cmd", COMMANDS)
def test_bash_offers_every_option_of_the_table(cmd):
    words = ["scprof"] + ([] if cmd == "profile" else [cmd]) + ["-"]
    (got,) = complete(words)
    assert set(got) == table(cmd)


def test_bash_completes_values():
    res = complete(["scprof", "top", "-s", ""], ["scprof", "-S", "p9"],
                   ["scprof", "-U", "calls,p9"], ["scprof", "--format="],
                   ["scprof", "verdict", "--format", ""],
                   ["scprof", "calibrate", "-l", "read-1"])
    assert res[0] == ["calls", "errors", "p99", "time"]
    assert res[1] == ["p90", "p99"]
    assert res[2] == ["calls,p90", "calls,p99"]
    assert res[3] == ["table", "json", "csv"]
    assert res[4] == ["table", "json"]
    assert res[5] == ["read-1B"]


def test_bash_completes_pids_after_p():
    with subprocess.Popen(["sleep", "30"]) as p:
        try:
            for words in (["scprof", "-p", ""], ["scprof", "top", "-p", ""],
                          ["scprof", "verdict", "-p", str(p.pid)[:-1]]):
                (got,) = complete(words)
                assert str(p.pid) in got, words
        finally:
            p.kill()


def test_bash_completes_files_for_diff():
    """scprof diff A B: the operands are files, the options still options."""
    with tempfile.TemporaryDirectory() as d:
        for name in ("before.json", "before.folded", "other"):
            open(os.path.join(d, name), "w").close()
        files, opts = complete(["scprof", "diff", os.path.join(d, "bef")],
                               ["scprof", "diff", "--fl"])
    assert sorted(files) == [os.path.join(d, "before.folded"),
                             os.path.join(d, "before.json")]
    assert opts == ["--flamegraph"]


def test_bash_hands_the_command_to_its_own_completion():
    """scprof -f ls --al: ls's options, not scprof's."""
    (ls_opts, after_dd) = complete(["scprof", "-f", "-d", "5", "ls", "--al"],
                                   ["scprof", "--", "ech"])
    assert "--all" in ls_opts and "--follow" not in ls_opts
    assert "echo" in after_dd


def accepted(cmd, opt, value):
    """Does scprof take opt value (then --help exits 0)?"""
    return run(scprof_argv(cmd, opt, value, "--help")).returncode == 0


def test_every_completed_value_is_accepted_by_scprof():
    """The values come from docs/gendocs.py: each is checked against the
    parser itself (a misspelt sort key would fail here)."""
    cases = [("profile", ["-S"]), ("profile", ["-U"]),
             ("profile", ["--format", ""]), ("top", ["-s"]),
             ("calibrate", ["-l"]), ("calibrate", ["--format", ""]),
             ("verdict", ["--format", ""])]
    for cmd, opt in cases:
        words = ["scprof"] + ([] if cmd == "profile" else [cmd]) + opt
        if len(opt) == 1:
            words.append("")
        (values,) = complete(words)
        assert values, words
        for v in values:
            assert accepted(cmd, opt[0], v), f"scprof {cmd} {opt[0]} {v}"


# ---- zsh completion ----------------------------------------------------

ZSH_DRIVER = r'''
fpath=($COMP_DIR $fpath)
autoload -U compinit
compinit -u -d $ZDUMP
print -r -- "comp=$_comps[scprof]"
# Stand-ins for zsh's completion helpers: print what they are given.
_arguments() { print -r -- "ARGUMENTS ${(j:|:)@}" }
_alternative() { print -r -- "ALTERNATIVE ${(j:|:)@}" }
words=(scprof ''); CURRENT=2; _scprof
words=(scprof top -); CURRENT=3; _scprof
words=(scprof -f ls); CURRENT=3; _scprof
'''


def test_zsh_completion_loads_and_dispatches():
    """compinit finds _scprof for scprof; called as zsh's completion system
    would, it offers the subcommands, then each one's options."""
    need("zsh")
    with tempfile.TemporaryDirectory() as d:
        r = run(["zsh", "-f", "-c", ZSH_DRIVER],
                env=dict(os.environ, COMP_DIR=os.path.dirname(ZSH_COMP),
                         ZDUMP=os.path.join(d, "zcompdump")))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "comp=_scprof", r.stdout
    assert lines[1].startswith("ALTERNATIVE ") and \
        "top daemon calibrate verdict" in lines[1], r.stdout
    top = lines[2].split("|")
    assert top[0] == "ARGUMENTS -s", r.stdout
    specs = "|".join(top[2:])
    for name in table("top"):
        assert re.search(rf"(^|[|)]){re.escape(name)}(\[|=|$)", specs), \
            f"zsh: {name} not offered by scprof top: {specs}"
    assert "--sort" in specs and ":value:(calls errors p99 time)" in specs
    prof = lines[3]
    assert prof.startswith("ARGUMENTS ") and "--count-only" in prof


ZSH_PTY = r'''
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1='%% '; fpath=($COMP_DIR \$fpath); autoload -U compinit; \
compinit -u -d $ZDUMP; unsetopt beep; zstyle ':completion:*' menu no; \
bindkey -e; print -r -- READY''NOW"
# Read until the output holds $1 (when given) and the shell has then been
# quiet for $2 ticks of 0.05 s (default 6); 60 s at most. A loaded machine
# may take seconds over compinit: quiet alone is not done.
drain() {
    local l idle=0 t=0
    out=
    while (( t++ < 1200 )); do
        if zpty -r -t z l; then out+=$l; idle=0
        else
            (( idle++ >= ${2:-6} )) && [[ -n $out ]] &&
                [[ -z $1 || $out == *$1* ]] && break
            sleep 0.05
        fi
    done
}
drain READYNOW
for line in "$@"; do
    # what TAB shows has no end mark: a second of quiet
    zpty -w -n z "$line"$'\t\t'
    drain '' 20
    print -r -- "=== $line"
    print -r -- "${out//$'\e'\[[0-9;?]#[a-zA-Z]/}"
    # the line killed (^E^U: a ^C would drop what is typed after it),
    # then a mark printed once the shell has run a command again
    zpty -w -n z $'\C-e\C-u'
    zpty -w z "print -r -- DONE''NOW"
    drain DONENOW
done
zpty -d z
'''


def test_zsh_completes_in_a_real_shell():
    """An interactive zsh on a pseudo-terminal (zpty), TAB pressed: what
    the line becomes, or the list it shows."""
    need("zsh")
    lines = ["scprof top --so", "scprof top -s ", "scprof --form",
             "scprof -U calls,p9", "scprof calibrate -l read-6", "scprof ver"]
    with tempfile.TemporaryDirectory() as d:
        r = run(["zsh", "-f", "-c", ZSH_PTY, "zsh"] + lines,
                env=dict(os.environ, COMP_DIR=os.path.dirname(ZSH_COMP),
                         ZDUMP=os.path.join(d, "zcompdump")), timeout=120)
    assert r.returncode == 0, r.stderr
    shown = {}
    for chunk in r.stdout.split("=== ")[1:]:
        line, _, rest = chunk.partition("\n")
        shown[line] = rest.replace("\r", "")
    assert "scprof top --sort" in shown["scprof top --so"], shown
    assert re.search(r"calls\s+errors\s+p99\s+time",
                     shown["scprof top -s "]), shown
    assert "scprof --format" in shown["scprof --form"], shown
    assert re.search(r"p90\s+p99", shown["scprof -U calls,p9"]), shown
    assert "read-64KiB" in shown["scprof calibrate -l read-6"], shown
    assert "verdict" in shown["scprof ver"], shown


def test_zsh_completion_lists_every_option():
    with open(ZSH_COMP) as f:
        src = f.read()
    for cmd in COMMANDS:
        body = re.search(r"^_scprof_%s\(\) \{\n(.*?)^\}" % cmd, src,
                         re.M | re.S).group(1)
        for name in table(cmd):
            assert re.search(rf"['{{,]{re.escape(name)}['}},\[]", body), \
                f"zsh: {name} not offered for {cmd}"


# ---- the README and the docs pages ----------------------------------------

README = os.path.join(ROOT, "README.md")
README_MAX_LINES = 300
FIRST_COMMANDS = ["apt-get install make git", "make run", "make test"]


def doc_pages():
    d = os.path.join(ROOT, "docs")
    return [README] + sorted(os.path.join(d, f) for f in os.listdir(d)
                             if f.endswith(".md"))


def prose_lines(path):
    """The page's lines with fenced code blocks blanked (their lines kept,
    so that numbers still match): no heading or link is taken from code."""
    out, fence = [], None
    with open(path) as f:
        for line in f.read().split("\n"):
            m = re.match(r"\s*(```|~~~)", line)
            if fence is None and m:
                fence = m.group(1)
                out.append("")
            elif fence is not None:
                if line.strip().startswith(fence):
                    fence = None
                out.append("")
            else:
                out.append(line)
    return out


def anchors(path):
    """The #anchors GitHub gives the page's headings: lower case, anything
    but letters, digits, '-', '_' and spaces dropped, spaces to '-', and
    -1, -2... after a repeated one."""
    seen, out = {}, set()
    for line in prose_lines(path):
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        a = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
        a = a.replace(" ", "-")
        n = seen.get(a, 0)
        seen[a] = n + 1
        out.add(a if n == 0 else "%s-%d" % (a, n))
    return out


def links(path):
    """(line, target) of every inline link and image of the page."""
    text = "\n".join(prose_lines(path))
    link = re.compile(r"!?\[[^\]]*\]"  # [text] or ![alt], maybe over lines
                      r"\(\s*<?([^)\s>]+)>?"  # (target
                      r"(?:\s+\"[^\"]*\")?\)")  # "title")
    for m in link.finditer(text):
        yield text.count("\n", 0, m.start()) + 1, m.group(1)


def test_github_anchors_as_github_makes_them(tmp_path):
    """The anchor rule itself, on headings like the pages' own."""
    page = tmp_path / "p.md"
    page.write_text("# Using scprof\n\n"
                    "## Who makes the calls: --by, -T, -p TID\n"
                    "```\n# not a heading\n```\n## Notes\n## Notes\n")
    assert anchors(str(page)) == {"using-scprof", "notes", "notes-1",
                                  "who-makes-the-calls---by--t--p-tid"}


def test_readme_is_a_landing_page():
    with open(README) as f:
        n = len(f.read().splitlines())
    assert n <= README_MAX_LINES, (
        f"README.md has {n} lines, more than {README_MAX_LINES}: it is the "
        "landing page; the reference goes to docs/*.md and the man pages")


def test_readme_first_commands_are_a_fresh_machines():
    """The first commands a reader meets, before any other section: the
    packages a fresh Debian lacks, then make run and make test."""
    lines = prose_lines(README)
    heads = [i for i, l in enumerate(lines) if l.startswith("## ")]
    assert heads and lines[heads[0]] == "## The two commands", (
        "the README's first section should be '## The two commands', not "
        f"{lines[heads[0]] if heads else None!r}")
    with open(README) as f:
        raw = f.read().split("\n")
    end = heads[1] if len(heads) > 1 else len(raw)
    block = raw[heads[0]:end]
    start = next(i for i, l in enumerate(block) if l.startswith("```"))
    stop = next(i for i in range(start + 1, len(block))
                if block[i].startswith("```"))
    cmds = [l.split("#")[0].strip() for l in block[start + 1:stop]]
    assert [c for c in cmds if c] == FIRST_COMMANDS, cmds


def test_relative_links_lead_somewhere():
    """Every relative link and image of README.md and docs/*.md names a
    file that exists, and its #anchor a heading of that page."""
    bad = []
    for path in doc_pages():
        here = os.path.dirname(path)
        rel = os.path.relpath(path, ROOT)
        for line, target in links(path):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto:
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(here, file)) if file \
                else path
            if not os.path.exists(dest):
                bad.append(f"{rel}:{line}: {target}: no such file")
            elif anchor and dest.endswith(".md") and \
                    anchor not in anchors(dest):
                bad.append(f"{rel}:{line}: {target}: no heading "
                           f"#{anchor} in {os.path.relpath(dest, ROOT)}")
    assert not bad, "\n".join(bad)


def test_readme_links_every_docs_page():
    """A page in docs/ that the README does not link is lost."""
    linked = {os.path.normpath(os.path.join(ROOT, t.partition("#")[0]))
              for _, t in links(README)}
    missing = [os.path.relpath(p, ROOT) for p in doc_pages()[1:]
               if p not in linked]
    assert not missing, f"README.md links none of {missing}"

