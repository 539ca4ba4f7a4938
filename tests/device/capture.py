"""Captures real out-of-memory and CUDA-error messages on a GPU machine.

Run on a machine with a CUDA GPU (nothing here is needed to build or test
oomwhy): `python3 tests/device/capture.py OUTDIR`. Each case runs in its own
Python process with a time limit; its whole output (stderr and stdout, in
order) is written byte for byte to OUTDIR/<case>.log, and OUTDIR/versions.txt
records the library versions, the GPU and each case's exit status. Cases
whose library is missing are skipped. A memory snapshot taken at an OOM is
written to OUTDIR/snapshot_oom.pickle (test data: never committed).
"""

import os
import subprocess
import sys
import textwrap

OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "out")
os.makedirs(OUT, exist_ok=True)

GIB = 1 << 30

CASES = {
    # The caching allocator's message as it is printed today, from a plain
    # allocation larger than the card.
    "torch_oom_plain": ({}, """
        import torch
        x = torch.empty(400 * (1 << 30), dtype=torch.uint8, device="cuda")
    """),
    # Filling the card with 8 GiB blocks, then one more: reserved memory,
    # allocated memory and the free remainder are all non-trivial.
    "torch_oom_filled": ({}, """
        import torch
        keep = []
        while True:
            keep.append(torch.empty(8 * (1 << 30), dtype=torch.uint8, device="cuda"))
    """),
    # The same with expandable segments.
    "torch_oom_expandable": ({"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}, """
        import torch
        keep = []
        while True:
            keep.append(torch.empty(8 * (1 << 30), dtype=torch.uint8, device="cuda"))
    """),
    # A per-process memory fraction: the "allowed" form.
    "torch_oom_fraction": ({}, """
        import torch
        torch.cuda.set_per_process_memory_fraction(0.05)
        x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
        y = torch.empty(8 * (1 << 30), dtype=torch.uint8, device="cuda")
    """),
    # The cudaMallocAsync backend's message.
    "torch_oom_async": ({"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"}, """
        import torch
        x = torch.empty(400 * (1 << 30), dtype=torch.uint8, device="cuda")
    """),
    # An OOM in the backward pass of a small training step, with a traceback.
    "torch_oom_backward": ({}, """
        import torch
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8192, 8192), torch.nn.ReLU(), torch.nn.Linear(8192, 8192)).cuda()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        hog = []
        free, total = torch.cuda.mem_get_info()
        # Leave about 4.5 GiB: the forward pass (about 3.3 GiB of activations)
        # fits, the backward pass should not.
        while torch.cuda.mem_get_info()[0] > 5.5 * (1 << 30):
            hog.append(torch.empty(1 << 30, dtype=torch.uint8, device="cuda"))
        for step in range(3):
            print(f"step {step}", flush=True)
            x = torch.randn(20000, 8192, device="cuda")
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
    """),
    # A device-side assert from an index out of range.
    "torch_device_assert": ({}, """
        import torch
        x = torch.zeros(3, device="cuda")
        i = torch.tensor([5], device="cuda")
        y = x[i]
        torch.cuda.synchronize()
    """),
    # An illegal memory access from a Triton kernel storing far out of bounds.
    "torch_illegal_access": ({}, """
        import torch, triton, triton.language as tl
        @triton.jit
        def bad(ptr):
            tl.store(ptr + (1 << 40), 1.0)
        x = torch.zeros(16, device="cuda")
        bad[(1,)](x)
        torch.cuda.synchronize()
    """),
    # Another process holds memory: the message lists the processes.
    "torch_oom_other_process": ({}, """
        import subprocess, sys, time, torch
        holder = subprocess.Popen([sys.executable, "-c",
            "import torch,time; x=torch.empty(40*(1<<30),dtype=torch.uint8,device='cuda'); print('held',flush=True); time.sleep(60)"],
            stdout=subprocess.PIPE)
        holder.stdout.readline()
        try:
            keep = []
            while True:
                keep.append(torch.empty(8 * (1 << 30), dtype=torch.uint8, device="cuda"))
        finally:
            holder.kill()
    """),
    # A memory snapshot recorded up to the OOM (written, never committed).
    "torch_oom_snapshot": ({}, f"""
        import torch
        torch.cuda.memory._record_memory_history(max_entries=20000)
        keep = []
        try:
            for i in range(200):
                keep.append(torch.empty((i % 7 + 1) * (1 << 28), dtype=torch.uint8, device="cuda"))
                if i % 3 == 0:
                    keep.pop(0)
            x = torch.empty(400 * (1 << 30), dtype=torch.uint8, device="cuda")
        finally:
            torch.cuda.memory._dump_snapshot({os.path.join(OUT, "snapshot_oom.pickle")!r})
    """),
    # JAX / XLA running out of memory.
    "jax_oom": ({"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}, """
        import jax, jax.numpy as jnp
        x = jnp.ones((400 * (1 << 30) // 4,), dtype=jnp.float32)
        x.block_until_ready()
    """),
    # CuPy's memory pool running out of memory.
    "cupy_oom": ({}, """
        import cupy as cp
        x = cp.empty(400 * (1 << 30), dtype=cp.uint8)
    """),
}

def version(code):
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    return (r.stdout.strip() or r.stderr.strip().splitlines()[-1:] or ["?"])[0] if r.returncode == 0 else "missing"

with open(os.path.join(OUT, "versions.txt"), "w") as v:
    v.write("python " + sys.version.split()[0] + "\n")
    v.write("torch " + version("import torch; print(torch.__version__, torch.version.cuda)") + "\n")
    v.write("jax " + version("import jax; print(jax.__version__)") + "\n")
    v.write("cupy " + version("import cupy; print(cupy.__version__)") + "\n")
    v.write("triton " + version("import triton; print(triton.__version__)") + "\n")
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                         capture_output=True, text=True)
    v.write("gpu " + smi.stdout.strip() + "\n")
    v.flush()
    only = sys.argv[2:]
    for name, (env, code) in CASES.items():
        if only and name not in only:
            continue
        full_env = dict(os.environ, PYTHONUNBUFFERED="1", **env)
        try:
            r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=90)
            out, status = r.stdout, r.returncode
        except subprocess.TimeoutExpired as e:
            out, status = (e.stdout or b""), "timeout"
        with open(os.path.join(OUT, name + ".log"), "wb") as f:
            f.write(out)
        v.write(f"{name} exit={status} env={env}\n")
        v.flush()
        print(name, status, flush=True)
