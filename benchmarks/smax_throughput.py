"""JaxMARL SMAX throughput, measured the same way as env_throughput.py (random valid actions, env steps/s).

    pip install jaxmarl   # benchmark-only, in its own virtual environment
    python benchmarks/smax_throughput.py --map 3m --n-envs 256 --steps 200

Uses HeuristicEnemySMAX with jit(vmap(scan)) over the steps, as JaxMARL's baselines do; each step also
computes a reset (SMAX auto-resets), so these are lower bounds. Compilation is excluded (warm-up call).
The last line is `env_steps_per_s=N` (best of the repeats).
"""
from __future__ import annotations

import argparse
import sys
import time


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--map", default="3m")
    p.add_argument("--n-envs", type=int, default=256)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    try:
        import jax
        import jax.numpy as jnp
        import jaxmarl
        from jaxmarl.environments.smax import map_name_to_scenario
    except ImportError:
        print("error: this benchmark needs jaxmarl: pip install jaxmarl (in a separate environment)", file=sys.stderr)
        sys.exit(2)
    env = jaxmarl.make("HeuristicEnemySMAX", scenario=map_name_to_scenario(args.map))

    def rollout(key):
        key, reset_key = jax.random.split(key)
        _, state = env.reset(reset_key)

        def body(carry, _):
            key, state = carry
            key, act_key, step_key = jax.random.split(key, 3)
            avail = env.get_avail_actions(state)
            keys = jax.random.split(act_key, env.num_agents)
            actions = {a: jax.random.categorical(k, jnp.log(avail[a] + 1e-10))
                       for a, k in zip(env.agents, keys, strict=True)}
            _, state, _, _, _ = env.step(step_key, state, actions)
            return (key, state), None

        (key, state), _ = jax.lax.scan(body, (key, state), None, length=args.steps)
        return state

    run = jax.jit(jax.vmap(rollout))
    keys = jax.random.split(jax.random.PRNGKey(0), args.n_envs)
    jax.block_until_ready(run(keys))  # compile
    rates = []
    for r in range(args.repeats):
        keys = jax.random.split(jax.random.PRNGKey(r + 1), args.n_envs)
        start = time.perf_counter()
        jax.block_until_ready(run(keys))
        rates.append(args.n_envs * args.steps / (time.perf_counter() - start))
    print(f"SMAX {args.map}: {args.n_envs} envs x {args.steps} steps, jax {jax.__version__} "
          f"on {jax.devices()[0].platform}")
    print(f"env_steps_per_s={max(rates):.0f}")


if __name__ == "__main__":
    main()
