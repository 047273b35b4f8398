"""JAX's time for bench_gpu's MLP train step (784-512-512-10, batch 1024, Adam), in ms.

Prints one number: the median over 200 steps after warm-up. Run on the machine bench_gpu runs on:
  python3 benchmarks/jax_mlp_step.py
"""
import time

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
    params = jax.tree_util.tree_map(lambda p, a, b: p - lr * a / (jnp.sqrt(b) + eps), params, mh, vh)
    return params, m, v, t, value


def main():
    key = jax.random.PRNGKey(0)
    params = init(key)
    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    t = jnp.zeros((), jnp.float32)
    x = jax.random.normal(jax.random.PRNGKey(1), (1024, 784))
    y = jax.random.randint(jax.random.PRNGKey(2), (1024,), 0, 10)
    step = jax.jit(adam_step)
    for _ in range(20):
        params, m, v, t, value = step(params, m, v, t, x, y)
    value.block_until_ready()
    times = []
    for _ in range(200):
        t0 = time.perf_counter()
        params, m, v, t, value = step(params, m, v, t, x, y)
        value.block_until_ready()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print(f"{times[len(times) // 2]:.4f}")


if __name__ == "__main__":
    main()
