"""PyTorch's caching allocator with cutaint's regions, through ctypes.

16 tensors from one segment of the caching allocator (each 16 KiB: the
small pool carves them out of one 2 MiB driver allocation); run.sh fails
the fourth launch of the kernel behind Tensor.fill_ (CUTAINT_INJECT), so
tensor 3's fill raises and the program, like a server, goes on to read all
16 back.  "pool": nothing declared, so to cutaint tensor 3's pointer covers
the rest of the segment and it says the allocation looks like a pool.
"regions": each tensor's block is declared a region (docs/POOLS.md's ctypes
form) with its data pointer and its storage's bytes, so exactly tensor 3 is
refused.  "trace": the same through tools/python's track_torch_allocator, which
declares each block the caching allocator hands out from its allocator
trace.  Without cutaint the region calls answer NO_SHIM (2), nothing is
tracked, and every read returns data.  Output: "RESULT key=value" lines
for run.sh.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools", "python"))
import cutaint_regions  # noqa: E402

N = 4096
TENSORS = 16


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 else "pool"
    if not torch.cuda.is_available():
        print("CUDA is not available to PyTorch")
        return 1
    if mode == "trace":
        tracking, why = cutaint_regions.track_torch_allocator()
        print(f"tracker: {why}")
        print(f"RESULT tracking={int(tracking)}")
    # empty, not zeros: no kernel runs before the fills CUTAINT_INJECT counts
    tensors = [torch.empty(N, device="cuda") for _ in range(TENSORS)]
    torch.cuda.synchronize()
    answers = {}
    if mode == "regions":
        for t in tensors:
            a = cutaint_regions.region_alloc(t.data_ptr(), t.untyped_storage().nbytes())
            answers[a] = answers.get(a, 0) + 1
    print("RESULT regions=" + ",".join(f"{k}:{v}" for k, v in sorted(answers.items())))
    segments = {t.untyped_storage().data_ptr() >> 21 for t in tensors}
    print(f"RESULT segments={len(segments)}")
    for i, t in enumerate(tensors):
        try:
            t.fill_(float(i + 1))
        except RuntimeError as e:
            print(f"fill_ of tensor {i} raised: {str(e).splitlines()[0]}")
    refused = 0
    for i, t in enumerate(tensors):
        try:
            ok = torch.equal(t.cpu(), torch.full((N,), float(i + 1)))
            print(f"tensor {i}: {'correct' if ok else 'wrong'}")
        except RuntimeError as e:
            refused += 1
            print(f"tensor {i}.cpu() raised: {str(e).splitlines()[0]}")
    print(f"RESULT refused={refused}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
