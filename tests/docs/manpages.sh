#!/usr/bin/env bash
# The manual pages say what the build does:
#   manpages.sh CUTAINT SOURCE_DIR
# - man/cutaint.1 holds, for `cutaint --help` and for each command that page
#   lists under COMMANDS, a section (.SS "cutaint COMMAND") whose first
#   .nf/.fi block is what `cutaint COMMAND --help` prints, word for word
#   once roff's escapes are undone, escaped as escape() does (- \- and
#   ' \(aq, so that every renderer prints ASCII), and, where groff is
#   installed, the same once groff renders it;
# - man/libcutaint.7 has an entry (.TP, then .B NAME) for every CUTAINT_
#   variable core/config.c knows, and none for a variable it does not;
# - both pages render without a warning (groff -ww, or mandoc -T lint;
#   skipped, with a note, where neither is installed).
# Fails naming the page and showing the difference.
set -euo pipefail
tool=$1 src=$2
man1=$src/man/cutaint.1 man7=$src/man/libcutaint.7
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

block() { # TITLE: the roff source of the first .nf/.fi block after .SS TITLE
    awk -v t="$1" '
        /^\.SS / { s = substr($0, 5); gsub(/"/, "", s); on = (s == t); next }
        on && /^\.nf/ { f = 1; next }
        f && /^\.fi/ { exit }
        f' "$man1"
}
escape() { # text -> its roff source in the pages: - ' ` ~ ^ \\ escaped, no control line
    sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/'/\\\\(aq/g" -e 's/`/\\(ga/g' -e 's/~/\\(ti/g' \
        -e 's/\^/\\(ha/g' -e 's/^[.]/\\\&./'
}
unescape() { # roff source -> the text it stands for (the escapes the pages use)
    sed -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" -e 's/\\(ga/`/g' -e 's/\\(ti/~/g' \
        -e 's/\\(ha/^/g' -e 's/\\&//g' -e 's/\\e/\\/g'
}
render() { # roff source of a no-fill block -> what man(7) under groff prints for it
    # (no indent, no line length to reach; the page's header and footer dropped)
    { printf '.TH X 1\n.nf\n'; cat; printf '.fi\n'; } |
        groff -man -Tutf8 -P-cbou -rcR=1 -rIN=0 -rLL=500n 2>&1 | sed '1d;$d' |
        awk 'NF { while (blank > 0 && seen) { print ""; blank-- } blank = 0; seen = 1; print; next } { blank++ }'
}

# The commands: `cutaint --help`'s COMMANDS list (a new command needs a
# section), then each command's page.
mapfile -t commands < <("$tool" --help | awk '/^[A-Z]/ { on = ($0 == "COMMANDS"); next }
                                              on && /^    [a-z]+  / { print $1 }')
[ "${#commands[@]}" -gt 0 ] || fail "'cutaint --help' lists no COMMANDS"
have_groff=0
command -v groff >/dev/null && have_groff=1
for cmd in "" "${commands[@]}"; do
    title="cutaint${cmd:+ $cmd}"
    # shellcheck disable=SC2086 # an empty $cmd is no word: 'cutaint --help'
    help=$("$tool" $cmd --help)
    roff=$(block "$title")
    if [ -z "$roff" ]; then
        fail "man/cutaint.1 has no section '.SS \"$title\"' with a .nf/.fi block ('$title --help')"
        continue
    fi
    if ! diff -u <(printf '%s\n' "$help") <(printf '%s\n' "$roff" | unescape) >&2; then
        fail "man/cutaint.1, '$title' differs from '$title --help' (- help, + man page)"
    elif ! diff -u <(printf '%s\n' "$help" | escape) <(printf '%s\n' "$roff") >&2; then
        fail "man/cutaint.1, '$title' says what --help says but not in the escapes the page uses (- expected roff, + man page)"
    elif [ "$have_groff" = 1 ] && ! diff -u <(printf '%s\n' "$help") <(printf '%s\n' "$roff" | render) >&2; then
        fail "man/cutaint.1, '$title' renders otherwise than '$title --help' prints (- help, + groff): an escape is missing"
    fi
done
[ "$have_groff" = 1 ] || echo "note: groff not installed: the rendered blocks are not compared"

# The variables: every "CUTAINT_X" string core/config.c holds (the shim's
# table and the command's own), each a .TP entry of libcutaint(7).
mapfile -t known < <(grep -o '"CUTAINT_[A-Z0-9_]\+"' "$src/core/config.c" | tr -d '"' | sort -u)
[ "${#known[@]}" -gt 0 ] || fail "no CUTAINT_ variable found in core/config.c"
mapfile -t documented < <(awk '/^\.TP/ { tp = 1; next }
                               tp && /^\.B CUTAINT_[A-Z0-9_]+$/ { print $2 } { tp = 0 }' "$man7" | sort -u)
while read -r var; do
    fail "man/libcutaint.7 has no entry (.TP, .B $var) for $var, which core/config.c knows"
done < <(comm -23 <(printf '%s\n' "${known[@]}") <(printf '%s\n' "${documented[@]}"))
while read -r var; do
    [ -n "$var" ] && fail "man/libcutaint.7 documents $var, which core/config.c does not know"
done < <(comm -13 <(printf '%s\n' "${known[@]}") <(printf '%s\n' "${documented[@]}"))

# The pages render cleanly.
for page in "$man1" "$man7"; do
    if [ "$have_groff" = 1 ]; then
        out=$(groff -man -ww -z "$page" 2>&1) || fail "groff failed on ${page#"$src"/}"
    elif command -v mandoc >/dev/null; then
        out=$(mandoc -T lint -W warning "$page" 2>&1) || fail "mandoc -T lint failed on ${page#"$src"/}"
    else
        echo "note: neither groff nor mandoc installed: ${page#"$src"/} not linted"
        continue
    fi
    [ -z "$out" ] || fail "${page#"$src"/} renders with warnings:"$'\n'"$out"
done

[ "$status" -eq 0 ] && echo "ok: man/cutaint.1 matches --help of cutaint and ${commands[*]}; man/libcutaint.7 documents ${#known[@]} variables"
exit "$status"
