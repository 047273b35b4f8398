"""The peers' times for bench_gpu's three cases, in ms, on the machine bench_gpu runs on:
  gelu over 256M float32 (tanh form), relu(x @ W + b) at 4096 in full f32 (precision highest),
  and the MLP train step (784-512-512-10, batch 1024, Adam) at the default precision.

  python3 benchmarks/jax_mlp_step.py            JAX (jax.jit)
  python3 benchmarks/jax_mlp_step.py --torch    PyTorch (eager, CUDA)

Each case is the median over 200 calls after warm-up. The last line is bench_gpu's argument:
  bench_gpu --jax_ms=GELU,DENSE,STEP --torch_ms=GELU,DENSE,STEP
"""
import sys
import time

WARMUP, CALLS = 20, 200


def median_ms(call, sync):
    for _ in range(WARMUP):
        call()
    sync()
    times = []
    for _ in range(CALLS):
        t0 = time.perf_counter()
        call()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def jax_cases():
    import jax
    import jax.numpy as jnp

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

    out = {}
    x = jax.random.normal(jax.random.PRNGKey(0), (256 << 20,))
    gelu = jax.jit(lambda v: jax.nn.gelu(v, approximate=True))
    out["gelu"] = median_ms(lambda: gelu(x), lambda: gelu(x).block_until_ready())

    a, w = (jax.random.normal(jax.random.PRNGKey(k), (4096, 4096)) for k in (1, 2))
    b = jax.random.normal(jax.random.PRNGKey(3), (4096,))
    dense = jax.jit(lambda a, w, b: jax.nn.relu(jnp.matmul(a, w, precision="highest") + b))
    out["dense"] = median_ms(lambda: dense(a, w, b), lambda: dense(a, w, b).block_until_ready())

    state = {"params": init(jax.random.PRNGKey(4))}
    state["m"] = jax.tree_util.tree_map(jnp.zeros_like, state["params"])
    state["v"] = jax.tree_util.tree_map(jnp.zeros_like, state["params"])
    state["t"] = jnp.zeros((), jnp.float32)
    xs = jax.random.normal(jax.random.PRNGKey(5), (1024, 784))
    ys = jax.random.randint(jax.random.PRNGKey(6), (1024,), 0, 10)
    step = jax.jit(adam_step)

    def one_step():
        p, m, v, t, value = step(state["params"], state["m"], state["v"], state["t"], xs, ys)
        state.update(params=p, m=m, v=v, t=t, value=value)

    out["step"] = median_ms(one_step, lambda: state["value"].block_until_ready())
    return "jax", out


def torch_cases():
    import torch
    import torch.nn.functional as F

    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    out = {}
    x = torch.randn(256 << 20, device=dev)
    out["gelu"] = median_ms(lambda: F.gelu(x, approximate="tanh"), sync)

    torch.backends.cuda.matmul.allow_tf32 = False  # full f32, as JAX's "highest"
    a, w = torch.randn(4096, 4096, device=dev), torch.randn(4096, 4096, device=dev)
    b = torch.randn(4096, device=dev)
    out["dense"] = median_ms(lambda: torch.relu(a @ w + b), sync)

    torch.backends.cuda.matmul.allow_tf32 = True  # the step at TF32, as JAX's default
    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xs = torch.randn(1024, 784, device=dev)
    ys = torch.randint(0, 10, (1024,), device=dev)

    def one_step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(xs), ys).backward()
        opt.step()

    out["step"] = median_ms(one_step, sync)
    return "torch", out


def main():
    name, out = torch_cases() if "--torch" in sys.argv[1:] else jax_cases()
    for case in ("gelu", "dense", "step"):
        print(f"{case} {out[case]:.4f}")
    print(f"--{name}_ms={out['gelu']:.4f},{out['dense']:.4f},{out['step']:.4f}")


if __name__ == "__main__":
    main()
