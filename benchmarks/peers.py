"""The peers' times for jx's benchmark cases, in ms, on the machine the benchmark runs on.

On the GPU, bench_gpu's cases:
  gelu      gelu over 256M float32 (tanh form)
  dense     relu(x @ W + b) at 4096 in full f32 (precision highest)
  bf16_gemm x @ W, bf16 operands at 8192, f32 result (JAX only: PyTorch has no such product)
  bf16_chain, cumsum, embed, embed_grad: bench_gpu's memory-bound cases
  conv, conv_grad: a 3x3 NHWC conv (64x32x32x64 -> 64, SAME) and its input and kernel gradients,
            at the default precision (TF32)
  step      the MLP train step (784-512-512-10, batch 1024, Adam) at the default precision

On the CPU (--cpu), bench_fusion's and bench_train's cases, on all the cores this process may use:
  gelu      gelu over f32[16M] (tanh form)
  softmax   softmax over the rows of f32[4096, 4096]
  dense512, dense1024, dense2048: relu(x @ W + b), f32[n, n]
  bf16_chain  max(1.5x + 0.25, 0) * x - x over bf16[16M]
  cumsum    over f32[16M]
  step      the MLP train step (784-512-512-10, batch 128, Adam)

  python3 benchmarks/peers.py [--cpu]            JAX (jax.jit)
  python3 benchmarks/peers.py [--cpu] --torch    PyTorch (eager)

Each case is the median of its calls after warm-up (on the GPU 200 calls; on the CPU at least 5
and 0.3 s). The last line is the benchmark's argument (bench_gpu, or bench_fusion and bench_train):
  bench_gpu --jax_ms=gelu:MS,dense:MS,... --torch_ms=...
"""
import os
import sys
import time

CPU = "--cpu" in sys.argv[1:]
if CPU:
    os.environ["JAX_PLATFORMS"] = "cpu"  # XLA:CPU even where JAX has a GPU
WARMUP, CALLS, MIN_S = (3, 5, 0.3) if CPU else (20, 200, 0)
N16M = 16 << 20
ROWS, WIDTH, LOOKUPS = 50000, 512, 4096


def median_ms(call, sync):
    for _ in range(WARMUP):
        call()
    sync()
    times = []
    start = time.perf_counter()
    while len(times) < CALLS or time.perf_counter() - start < MIN_S:
        t0 = time.perf_counter()
        call()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def jax_cases():
    import jax
    import jax.numpy as jnp

    def timed(fn, *args):
        last = []

        def call():
            last[:] = [fn(*args)]

        return median_ms(call, lambda: jax.block_until_ready(last[0]))

    def normal(seed, shape, dtype=jnp.float32):
        return jax.random.normal(jax.random.PRNGKey(seed), shape).astype(dtype)

    out = {}
    if CPU:
        out["gelu"] = timed(jax.jit(lambda v: jax.nn.gelu(v, approximate=True)), normal(0, (N16M,)))
        out["softmax"] = timed(jax.jit(lambda v: jax.nn.softmax(v, axis=-1)),
                               normal(1, (4096, 4096)))
        for n in (512, 1024, 2048):
            a, w, b = normal(2, (n, n)), normal(3, (n, n)), normal(4, (n,))
            out[f"dense{n}"] = timed(jax.jit(lambda a, w, b: jax.nn.relu(a @ w + b)), a, w, b)
        h = normal(5, (N16M,), jnp.bfloat16)
        out["bf16_chain"] = timed(jax.jit(lambda v: jnp.maximum(v * 1.5 + 0.25, 0) * v - v), h)
        out["cumsum"] = timed(jax.jit(jnp.cumsum), normal(6, (N16M,)))
        out["step"] = jax_step(jax, jnp, batch=128)
        return "jax", out

    out["gelu"] = timed(jax.jit(lambda v: jax.nn.gelu(v, approximate=True)), normal(0, (256 << 20,)))

    a, w, b = normal(1, (4096, 4096)), normal(2, (4096, 4096)), normal(3, (4096,))
    out["dense"] = timed(
        jax.jit(lambda a, w, b: jax.nn.relu(jnp.matmul(a, w, precision="highest") + b)), a, w, b)

    a16, w16 = normal(4, (8192, 8192), jnp.bfloat16), normal(5, (8192, 8192), jnp.bfloat16)
    out["bf16_gemm"] = timed(
        jax.jit(lambda a, w: jnp.matmul(a, w, preferred_element_type=jnp.float32)), a16, w16)

    h = normal(7, (N16M,), jnp.bfloat16)
    out["bf16_chain"] = timed(jax.jit(lambda v: jax.nn.relu(v * 1.5 + 0.25) * v), h)
    out["cumsum"] = timed(jax.jit(jnp.cumsum), normal(8, (N16M,)))

    table = normal(9, (ROWS, WIDTH))
    ids = jax.random.randint(jax.random.PRNGKey(10), (LOOKUPS,), 0, ROWS)
    out["embed"] = timed(jax.jit(lambda t, i: jnp.take(t, i, axis=0)), table, ids)
    upd = normal(11, (LOOKUPS, WIDTH))
    out["embed_grad"] = timed(
        jax.jit(lambda i, u: jnp.zeros((ROWS, WIDTH), jnp.float32).at[i].add(u)), ids, upd)

    x, k = normal(12, (64, 32, 32, 64)), normal(13, (3, 3, 64, 64)) * 0.05

    def conv(x, k):
        return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))

    out["conv"] = timed(jax.jit(conv), x, k)
    out["conv_grad"] = timed(jax.jit(jax.grad(lambda x, k: jnp.sum(conv(x, k)), (0, 1))), x, k)

    out["step"] = jax_step(jax, jnp, batch=1024)
    return "jax", out


def jax_step(jax, jnp, batch):
    def init(key):
        sizes = [(784, 512), (512, 512), (512, 10)]
        keys = jax.random.split(key, len(sizes))
        return [(jax.random.normal(k, s) * jnp.sqrt(2.0 / s[0]), jnp.zeros(s[1]))
                for k, s in zip(keys, sizes)]

    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jax.nn.relu(h @ w + b)
        w, b = params[-1]
        logits = h @ w + b
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))

    def adam_step(params, m, v, t, x, y, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        m = jax.tree_util.tree_map(lambda a, g: b1 * a + (1 - b1) * g, m, grads)
        v = jax.tree_util.tree_map(lambda a, g: b2 * a + (1 - b2) * g * g, v, grads)
        t = t + 1
        mh = jax.tree_util.tree_map(lambda a: a / (1 - b1 ** t), m)
        vh = jax.tree_util.tree_map(lambda a: a / (1 - b2 ** t), v)
        params = jax.tree_util.tree_map(lambda p, a, b: p - lr * a / (jnp.sqrt(b) + eps),
                                        params, mh, vh)
        return params, m, v, t, value

    state = {"params": init(jax.random.PRNGKey(4))}
    state["m"] = jax.tree_util.tree_map(jnp.zeros_like, state["params"])
    state["v"] = jax.tree_util.tree_map(jnp.zeros_like, state["params"])
    state["t"] = jnp.zeros((), jnp.float32)
    xs = jax.random.normal(jax.random.PRNGKey(5), (batch, 784))
    ys = jax.random.randint(jax.random.PRNGKey(6), (batch,), 0, 10)
    step = jax.jit(adam_step)

    def one_step():
        p, m, v, t, value = step(state["params"], state["m"], state["v"], state["t"], xs, ys)
        state.update(params=p, m=m, v=v, t=t, value=value)

    return median_ms(one_step, lambda: state["value"].block_until_ready())


def torch_step(torch, F, dev, sync, batch):
    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xs = torch.randn(batch, 784, device=dev)
    ys = torch.randint(0, 10, (batch,), device=dev)

    def one_step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(xs), ys).backward()
        opt.step()

    return median_ms(one_step, sync)


def torch_cpu_cases(torch, F):
    cpu = torch.device("cpu")
    out = {}
    x = torch.randn(N16M)
    out["gelu"] = median_ms(lambda: F.gelu(x, approximate="tanh"), lambda: None)
    s = torch.randn(4096, 4096)
    out["softmax"] = median_ms(lambda: torch.softmax(s, -1), lambda: None)
    for n in (512, 1024, 2048):
        a, w, b = torch.randn(n, n), torch.randn(n, n), torch.randn(n)
        out[f"dense{n}"] = median_ms(lambda: torch.relu(a @ w + b), lambda: None)
    h = torch.randn(N16M).to(torch.bfloat16)
    out["bf16_chain"] = median_ms(lambda: torch.relu(h * 1.5 + 0.25) * h - h, lambda: None)
    c = torch.randn(N16M)
    out["cumsum"] = median_ms(lambda: torch.cumsum(c, 0), lambda: None)
    out["step"] = torch_step(torch, F, cpu, lambda: None, batch=128)
    return "torch", out


def torch_cases():
    import torch
    import torch.nn.functional as F

    if CPU:
        return torch_cpu_cases(torch, F)
    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    out = {}
    x = torch.randn(256 << 20, device=dev)
    out["gelu"] = median_ms(lambda: F.gelu(x, approximate="tanh"), sync)

    torch.backends.cuda.matmul.allow_tf32 = False  # full f32, as JAX's "highest"
    a, w = torch.randn(4096, 4096, device=dev), torch.randn(4096, 4096, device=dev)
    b = torch.randn(4096, device=dev)
    out["dense"] = median_ms(lambda: torch.relu(a @ w + b), sync)
    torch.backends.cuda.matmul.allow_tf32 = True  # TF32 from here on, as JAX's default
    torch.backends.cudnn.allow_tf32 = True

    h = torch.randn(N16M, device=dev).to(torch.bfloat16)
    out["bf16_chain"] = median_ms(lambda: torch.relu(h * 1.5 + 0.25) * h, sync)
    c = torch.randn(N16M, device=dev)
    out["cumsum"] = median_ms(lambda: torch.cumsum(c, 0), sync)

    table = torch.randn(ROWS, WIDTH, device=dev)
    ids = torch.randint(0, ROWS, (LOOKUPS,), device=dev)
    out["embed"] = median_ms(lambda: table.index_select(0, ids), sync)
    upd = torch.randn(LOOKUPS, WIDTH, device=dev)
    out["embed_grad"] = median_ms(
        lambda: torch.zeros(ROWS, WIDTH, device=dev).index_add_(0, ids, upd), sync)

    xc = torch.randn(64, 64, 32, 32, device=dev).to(memory_format=torch.channels_last)
    kc = (torch.randn(64, 64, 3, 3, device=dev) * 0.05).to(memory_format=torch.channels_last)
    out["conv"] = median_ms(lambda: F.conv2d(xc, kc, padding=1), sync)
    xg, kg = xc.clone().requires_grad_(), kc.clone().requires_grad_()

    def conv_grad():
        xg.grad = kg.grad = None
        F.conv2d(xg, kg, padding=1).sum().backward()

    out["conv_grad"] = median_ms(conv_grad, sync)

    out["step"] = torch_step(torch, F, dev, sync, batch=1024)
    return "torch", out


def main():
    name, out = torch_cases() if "--torch" in sys.argv[1:] else jax_cases()
    for case, ms in out.items():
        print(f"{case} {ms:.4f}")
    print(f"--{name}_ms=" + ",".join(f"{case}:{ms:.4f}" for case, ms in out.items()))


if __name__ == "__main__":
    main()
