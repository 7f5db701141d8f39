"""A serving-style PyTorch program whose fill kernel fails once.

The program keeps an output buffer on the GPU across requests. run.sh runs it
under cutaint with CUTAINT_INJECT failing the first launch of a kernel whose
name matches *FillFunctor* (the kernel behind Tensor.fill_). PyTorch raises at
the launch; the program, like a server, catches that and goes on to read
results. Without cutaint the buffer still holds the previous request's bytes
and a read would return them; with cutaint every read of those bytes, and of
a tensor computed from them, must raise instead. A tensor the failed kernel
never touched must still read back correctly: always with
PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync (one driver allocation per
tensor); with the default caching allocator tensors share driver allocations,
so the result is printed but not required.

Run without cutaint (no failure), every read returns correct data.
Output: human-readable lines, then "RESULT key=value" lines for run.sh.
"""
import sys

import torch

N = 1 << 20  # 4 MiB of float32 per tensor


def read(label, tensor, want):
    """Read a tensor back to the host; say whether it raised, or what it held."""
    try:
        host = tensor.cpu()
    except RuntimeError as e:  # torch.AcceleratorError is a RuntimeError
        print(f"{label}.cpu() raised {type(e).__name__}: {str(e).splitlines()[0]}")
        return "raised"
    seen = "correct" if torch.equal(host, want) else "wrong"
    print(f"{label}.cpu() returned data ({seen}): {host[:4].tolist()}")
    return seen


def main() -> int:
    if not torch.cuda.is_available():
        print("CUDA is not available to PyTorch")
        return 1
    print(f"allocator backend: {torch.cuda.get_allocator_backend()}")
    ramp = torch.arange(N, dtype=torch.float32)
    # Host-to-device copies only: no kernel runs before the fill below.
    other = ramp.cuda()            # an unrelated tensor
    out = (-ramp).cuda()           # the previous request's answer, now stale
    torch.cuda.synchronize()

    try:
        out.fill_(1.0)             # this request's answer: launches FillFunctor
        launch = "ok"
    except RuntimeError as e:
        print(f"fill_ raised {type(e).__name__}: {str(e).splitlines()[0]}")
        launch = "raised"
    try:
        derived = out * 2          # reads the buffer the failed kernel left
        derived_launch = "ok"
    except RuntimeError as e:
        print(f"out * 2 raised {type(e).__name__}: {str(e).splitlines()[0]}")
        derived, derived_launch = None, "raised"

    read_out = read("out", out, torch.ones(N))
    read_derived = (read("derived", derived, torch.full((N,), 2.0))
                    if derived is not None else "not computed")
    read_other = read("other", other, ramp)

    print(f"RESULT launch={launch}")
    print(f"RESULT derived_launch={derived_launch}")
    print(f"RESULT read_out={read_out}")
    print(f"RESULT read_derived={read_derived}")
    print(f"RESULT read_other={read_other}")
    print(f"RESULT allocator={torch.cuda.get_allocator_backend()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
