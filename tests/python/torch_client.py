"""torch_client.py MODE: a PyTorch program, as a user writes one.

On fakecuda PyTorch's kernels run as writing nothing (they ship as SASS:
FAKECUDA_SASS=nowrite), so the program prints only what that leaves
deterministic: statuses, shapes, and data the host wrote (copies are real).
Each fact is one "RESULT KEY=value" line for tests/python/torch.sh.

clean: torch.cuda.is_available, an allocation, .to('cuda'), an
  elementwise op, .cpu(); a side stream; a CUDA graph captured and
  replayed; the caching allocator's reuse of a freed block.
inject: the program's first kernel (a fill_) is failed by the test's
  FAKECUDA_FAULTS; like a server, the program goes on and reads the tensor
  back: bare, .cpu() hands back what the host wrote before, under cutaint
  it raises with the fill's error.
pool: 8 tensors carved from one segment of the caching allocator; the
  fill of tensor 3 is failed; every tensor is read back.
regions: the same, each block declared a region by tools/python's
  track_torch_allocator (when cutaint is loaded).
"""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "python"))
import cutaint_regions  # noqa: E402

N = 4096


def first_line(e):
    return str(e).splitlines()[0]


def clean():
    print(f"RESULT available={torch.cuda.is_available()}")
    host = torch.arange(N, dtype=torch.float32)
    dev = host.to("cuda")
    print(f"RESULT device={dev.device.type} shape={tuple(dev.shape)}")
    print(f"RESULT roundtrip={torch.equal(dev.cpu(), host)}")
    twice = dev * 2  # a kernel: on fakecuda it writes nothing
    torch.cuda.synchronize()
    print(f"RESULT elementwise={tuple(twice.cpu().shape)} {twice.dtype}")

    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        copied = host.to("cuda", non_blocking=True)
        copied.add_(1)
    side.synchronize()
    print(f"RESULT stream_copy={torch.equal(copied[:0].cpu(), host[:0])} {tuple(copied.cpu().shape)}")

    static_in = host.to("cuda")
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        static_out = static_in * 3  # warm-up outside the capture, as PyTorch asks
    torch.cuda.current_stream().wait_stream(warm)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = static_in * 3
    static_in.copy_(host.flip(0))  # a copy is real: the graph input changes
    graph.replay()
    torch.cuda.synchronize()
    print(f"RESULT graph_replayed={tuple(static_out.cpu().shape)} input={torch.equal(static_in.cpu(), host.flip(0))}")

    block = torch.empty(N, device="cuda")
    address = block.data_ptr()
    del block
    again = torch.empty(N, device="cuda")
    print(f"RESULT allocator_reuse={again.data_ptr() == address}")
    print(f"RESULT allocated={torch.cuda.memory_allocated() > 0} reserved={torch.cuda.memory_reserved() > 0}")


def inject():
    host = torch.arange(N, dtype=torch.float32)
    dev = host.to("cuda")
    try:
        dev.fill_(7.0)  # the first kernel: failed by FAKECUDA_FAULTS
        torch.cuda.synchronize()
        print("RESULT fill=ok")
    except RuntimeError as e:
        print(f"RESULT fill={first_line(e)}")
    try:
        back = dev.cpu()
        print(f"RESULT read=data stale={torch.equal(back, host)}")
    except RuntimeError as e:
        print(f"RESULT read=raised {first_line(e)}")


def pool(track):
    tracking, why = cutaint_regions.track_torch_allocator() if track else (False, "not asked")
    print(f"tracker: {why}")
    print(f"RESULT tracking={int(tracking)}")
    host = torch.arange(N, dtype=torch.float32)
    # empty, not zeros: no kernel runs before the fills the test counts
    tensors = [torch.empty(N, device="cuda") for _ in range(8)]
    for t in tensors:
        t.copy_(host)
    segments = {t.untyped_storage().data_ptr() >> 21 for t in tensors}
    print(f"RESULT segments={len(segments)}")
    for i, t in enumerate(tensors):
        try:
            t.fill_(float(i + 1))
        except RuntimeError as e:
            print(f"fill_ of tensor {i} raised: {first_line(e)}")
    refused = []
    for i, t in enumerate(tensors):
        try:
            t.cpu()
        except RuntimeError as e:
            refused.append(i)
            print(f"tensor {i}.cpu() raised: {first_line(e)}")
    print(f"RESULT refused={','.join(map(str, refused)) or 'none'}")


if __name__ == "__main__":
    modes = {"clean": clean, "inject": inject, "pool": lambda: pool(False), "regions": lambda: pool(True)}
    modes[sys.argv[1]]()
