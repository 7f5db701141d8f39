#!/usr/bin/env python3
"""check_handles.py CUDA_H STUB_LIBCUDA SHIM INTERCEPT_DEF

A stand-in handle (shim/standins.c) must never reach the driver, so every
entry point of the driver that takes a library, kernel or function handle
(or a structure holding one) must be a cutaint wrapper that asks about it.
From cuda.h: every function with such a parameter; from the toolkit's stub
libcuda.so: the names the driver exports for it (_v2, _ptsz, ...).  Each
must be exported by libcutaint.so, and its line in intercept.def must ask
about stand-ins (CT_UNLESS_STAND_IN, a ct_not_stand_in* or stand-in hook,
or ct_before_launch, which fails a stand-in's launch itself).  Exits 77
(skipped) without the stub.
"""
import os
import re
import subprocess
import sys

HANDLES = r"\b(CUlibrary|CUkernel|CUfunction|CUDA_KERNEL_NODE_PARAMS\w*|CUgraphNodeParams|CUDA_LAUNCH_PARAMS\w*)\b"
# Functions whose only such parameter is an answer, never a handle passed in.
OUT_ONLY = {
    "cuGraphKernelNodeGetParams": "a node's parameters, read out: no node holds a stand-in",
    "cuModuleEnumerateFunctions": "functions of a module, handed out: no stand-in module exists",
    "cuModuleGetFunction": "a module's function, handed out: no stand-in module exists",
    "cuLibraryLoadData": "the library handed out (the stand-in is made there)",
    "cuLibraryLoadFromFile": "the library handed out",
}
ASKS = re.compile(r"STAND_IN|stand_in|ct_before_launch|ct_before_library_(kernel|unload)|ct_before_kernel_function")


def families(cuda_h):
    text = re.sub(r"/\*.*?\*/", "", open(cuda_h).read(), flags=re.S)
    found = set()
    for name, params in re.findall(r"CUresult\s+CUDAAPI\s+(\w+)\s*\(([^;]*?)\)\s*;", text):
        if re.search(HANDLES, params):
            found.add(name)
    return found


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    # Without the version a name carries (cuInit@@CUTAINT_1).
    return {f[2].split("@")[0] for f in (line.split() for line in out.splitlines()) if len(f) == 3 and f[1] in "TtWw"}


def family_of(name):
    return re.sub(r"(_v\d+)?(_ptsz|_ptds)?$", "", name)


def wrapper_lines(intercept_def):
    """name -> the text of its CT_WRAP/CT_PTSZ/CT_PTDS/CT_STAND_IN_ONLY entry."""
    text = open(intercept_def).read()
    entries = {}
    starts = [m for m in re.finditer(r"^(CT_WRAP|CT_PTSZ|CT_PTDS|CT_STAND_IN_ONLY)\((\w+),", text, re.M)]
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        body = text[m.start():end]
        entries[m.group(2)] = body
        if m.group(1) in ("CT_PTSZ", "CT_PTDS"):
            entries[m.group(2) + "_" + m.group(1)[3:].lower()] = body
    return entries


def main():
    cuda_h, stub, shim, intercept_def = sys.argv[1:5]
    if not os.path.exists(stub):
        print(f"skipped: no stub libcuda.so at {stub} (the toolkit's lib64/stubs)")
        return 77
    wanted = families(cuda_h) - set(OUT_ONLY)
    driver = exported(stub)
    ours = exported(shim)
    entries = wrapper_lines(intercept_def)
    names = sorted(n for n in driver if family_of(n) in wanted)
    bad = []
    for name in names:
        if name not in ours:
            bad.append(f"{name}: not exported by libcutaint.so (the driver's would take a stand-in)")
        elif name not in entries:
            bad.append(f"{name}: exported but not found in intercept.def")
        elif not ASKS.search(entries[name]):
            bad.append(f"{name}: its wrapper does not ask about stand-ins")
    missing = sorted(f for f in wanted if not any(family_of(n) == f for n in names))
    print(f"{len(wanted)} families take a library, kernel or function handle; the driver exports {len(names)} "
          f"names for them; {len(names) - len(bad)} ask about stand-ins")
    if missing:
        print("not exported by the stub (nothing to wrap): " + " ".join(missing))
    for line in bad:
        print("FAIL " + line)
    return 1 if bad or not names else 0


if __name__ == "__main__":
    sys.exit(main())
