#!/usr/bin/env python3
"""Check a cutaint JSON Lines report (docs/REPORT.md) for tests/gpu/run.sh.

Prints one line describing the report, then one line per check that failed,
each starting with "report:". Exits 0 when every check passed, 1 otherwise.

  check_report.py REPORT [--require EVENT]... [--forbid EVENT]...
                  [--only EVENT,EVENT] [--kernel EVENT:SUBSTRING]...
                  [--injected] [--unusable KERNEL:ERROR] [--prime-suspect TEXT]
                  [--exit-status N]

--require EVENT          at least one line has "event": EVENT
--forbid EVENT           no line has it
--only LIST              every line's event is in the comma-separated LIST
--kernel EVENT:TEXT      some EVENT line's "kernel" contains TEXT
--path TEXT              some refused_read line's "path" has an entry containing TEXT
--injected               some failure line has "injected": true
--unusable KERNEL:ERROR  a kernel the device cannot use: the first failure
                         naming KERNEL has "error": ERROR and comes either
                         from a stand-in (its "image" is 1, the image event
                         number 1, stand_in true, from cuLibraryLoadData or
                         cuLibraryGetKernel, the same error) or from the
                         driver's own launch (cuLaunchKernel*, "image" null,
                         no image event); a refused_read has "failures"
                         exactly [its id]. The first line then ends with
                         "; KERNEL reported at: WHERE (failure #ID, N
                         occurrence(s))", WHERE the image event's api,
                         "launch" or "none", N counting its repeats
--prime-suspect TEXT     every context_lost line lists at least one suspect,
                         the first of them prime, suspects_total at least as
                         many as listed, and a prime suspect whose "kernel"
                         contains TEXT
--exit-status N          the last exit line has "status": N
"""
import argparse
import collections
import json
import sys


def load(path):
    """The report's events; a last line cut short is reported, not fatal."""
    events, notes = [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for no, line in enumerate(lines, 1):
        try:
            ev = json.loads(line)
            if not isinstance(ev, dict):
                raise ValueError("not an object")
            events.append(ev)
        except ValueError as e:
            last = no == len(lines)
            notes.append(f"line {no} {'truncated' if last else 'is not JSON'}: {e}")
    return events, notes


def unusable(events, kernel, error):
    """Where the device's refusal of KERNEL's image was reported, and what is
    wrong with the failure it became: (WHERE and the failure's id and
    occurrences, [failed checks])."""
    def of(kind):
        return [ev for ev in events if ev.get("event") == kind]

    failures = [ev for ev in of("failure") if kernel in str(ev.get("kernel"))]
    if not failures:
        names = [str(ev.get("kernel")) for ev in of("failure")]
        return "none", [f"no failure names a kernel containing {kernel!r} (kernels seen: {names[:5]})"]
    fl, bad = failures[0], []
    fid = fl.get("id")
    repeats = sum(1 for ev in of("repeat") if ev.get("failure") == fid)
    desc = json.dumps(fl)[:300]
    if fl.get("error") != error:
        bad.append(f"{kernel}'s failure #{fid} has error {fl.get('error')}, expected {error}")
    images = of("image")
    if fl.get("image") is None:
        where = "launch"
        if not str(fl.get("api")).startswith("cuLaunchKernel"):
            bad.append(f"{kernel}'s failure #{fid} names no image and is not a launch: {desc}")
        if images:
            bad.append(f"{kernel}'s failure #{fid} names no image, but the report has "
                       f"{len(images)} image event(s), first: {json.dumps(images[0])[:300]}")
    else:
        im = [ev for ev in images if ev.get("number") == fl.get("image")]
        if not im:
            return "none", bad + [f"{kernel}'s failure #{fid} names image {fl.get('image')}, "
                                  f"which no image event has: {desc}"]
        im = im[0]
        where = str(im.get("api"))
        if fl.get("image") != 1:
            bad.append(f"{kernel}'s failure #{fid} names image {fl.get('image')}, expected 1")
        if where not in ("cuLibraryLoadData", "cuLibraryGetKernel"):
            bad.append(f"image {im.get('number')} is from {where}, expected cuLibraryLoadData or cuLibraryGetKernel")
        if im.get("stand_in") is not True:
            bad.append(f"image {im.get('number')} has stand_in {json.dumps(im.get('stand_in'))}, expected true")
        if im.get("error") != error:
            bad.append(f"image {im.get('number')} has error {im.get('error')}, expected {error}")
    reads = of("refused_read")
    if not any(ev.get("failures") == [fid] for ev in reads):
        bad.append(f"no refused_read has failures [{fid}] (seen: {[ev.get('failures') for ev in reads][:3]})")
    return f"{where} (failure #{fid}, {1 + repeats} occurrence(s))", bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("--require", action="append", default=[])
    ap.add_argument("--forbid", action="append", default=[])
    ap.add_argument("--only")
    ap.add_argument("--kernel", action="append", default=[])
    ap.add_argument("--path", action="append", default=[])
    ap.add_argument("--injected", action="store_true")
    ap.add_argument("--unusable")
    ap.add_argument("--prime-suspect")
    ap.add_argument("--exit-status", type=int)
    a = ap.parse_args()

    try:
        events, notes = load(a.report)
    except OSError as e:
        print("report: none")
        print(f"report: cannot read {a.report}: {e.strerror}")
        return 1
    counts = collections.Counter(str(ev.get("event")) for ev in events)
    desc = ", ".join(f"{k}={v}" for k, v in sorted(counts.items())) or "no events"
    tail, more = "", []
    if a.unusable:
        kernel, _, error = a.unusable.partition(":")
        where, more = unusable(events, kernel, error)
        tail = f"; {kernel} reported at: {where}"
    print(f"report: {len(events)} events ({desc}){tail}")
    bad = [n for n in notes if "is not JSON" in n] + more
    for n in notes:
        print(f"report: {n}")

    def of(kind):
        return [ev for ev in events if ev.get("event") == kind]

    for ev in a.require:
        if not counts[ev]:
            bad.append(f"no {ev} event")
    for ev in a.forbid:
        if counts[ev]:
            first = json.dumps(of(ev)[0])[:300]
            bad.append(f"unexpected {ev} event(s) ({counts[ev]}), first: {first}")
    if a.only:
        allowed = set(a.only.split(","))
        extra = sorted(set(counts) - allowed)
        if extra:
            bad.append(f"events beyond {a.only}: {', '.join(extra)}")
    for spec in a.kernel:
        kind, _, text = spec.partition(":")
        names = [str(ev.get("kernel")) for ev in of(kind)]
        if not any(text in n for n in names):
            bad.append(f"no {kind} event names a kernel containing {text!r} "
                       f"(kernels seen: {names[:5]})")
    for text in a.path:
        paths = [ev.get("path") or [] for ev in of("refused_read")]
        if not any(text in str(p) for path in paths for p in path):
            bad.append(f"no refused_read path mentions {text!r} (paths: {paths[:3]})")
    if a.injected and not any(ev.get("injected") is True for ev in of("failure")):
        bad.append("no failure event has injected=true")
    if a.prime_suspect is not None:
        lost = of("context_lost")
        if not lost:
            bad.append("no context_lost event to name suspects")
        for ev in lost:
            sus = ev.get("suspects")
            total = ev.get("suspects_total")
            if not isinstance(sus, list) or not sus:
                bad.append(f"a context_lost event names no suspect (suspects_total {total})")
                continue
            if not isinstance(total, int) or total < len(sus):
                bad.append(f"context_lost suspects_total {total}, but {len(sus)} listed")
            if sus[0].get("prime") is not True:
                bad.append(f"the first suspect is not prime: {json.dumps(sus[0])[:300]}")
            primes = [str(s.get("kernel")) for s in sus if s.get("prime") is True]
            if not any(a.prime_suspect in k for k in primes):
                bad.append(f"no prime suspect names a kernel containing {a.prime_suspect!r} "
                           f"(prime suspects: {primes[:5]})")
    if a.exit_status is not None:
        exits = of("exit")
        if not exits:
            bad.append("no exit event")
        elif exits[-1].get("status") != a.exit_status:
            bad.append(f"exit event status {exits[-1].get('status')}, "
                       f"expected {a.exit_status}")
    for b in bad:
        print(f"report: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
